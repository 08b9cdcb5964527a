// Builds the dashboard into dashboard/dist: esbuild bundles src/main.tsx (Preact, and the TypeScript
// client of clients/typescript) and its CSS into content-hashed files, cached for good by browsers, and
// writes index.html naming them (no inline script, so the page's Content-Security-Policy forbids all).
// Run by scripts/start.sh and scripts/test.sh, and skipped when nothing it reads changed since the last
// build: `node dashboard/build.ts`.
import { createHash } from 'node:crypto';
import { readdir, readFile, rm, writeFile, mkdir } from 'node:fs/promises';
import { basename } from 'node:path';
import { build } from 'esbuild';

const here = new URL('./', import.meta.url).pathname;
const dist = `${here}dist/`;
const inputs = [`${here}src`, `${here}../clients/typescript/src`, `${here}../package-lock.json`, `${here}build.ts`];

async function fingerprint(): Promise<string> {
  const hash = createHash('sha256');
  for (const input of inputs) {
    const files = input.endsWith('.json') || input.endsWith('.ts') ? [input] : (await readdir(input, { recursive: true, withFileTypes: true })).filter((e) => e.isFile()).map((e) => `${e.parentPath}/${e.name}`).sort();
    for (const file of files) hash.update(file).update(await readFile(file));
  }
  return hash.digest('hex');
}

const stamp = await fingerprint();
const built = await readFile(`${dist}.stamp`, 'utf8').catch(() => '');
if (built === stamp && !process.argv.includes('--force')) process.exit(0);

await rm(dist, { recursive: true, force: true });
await mkdir(`${dist}assets`, { recursive: true });
const result = await build({
  entryPoints: [`${here}src/main.tsx`],
  bundle: true,
  format: 'esm',
  platform: 'browser',
  target: 'es2022',
  minify: true,
  sourcemap: false,
  jsx: 'automatic',
  jsxImportSource: 'preact',
  entryNames: '[name]-[hash]',
  outdir: `${dist}assets`,
  metafile: true,
  legalComments: 'none',
  logLevel: 'error',
});
const outputs = Object.keys(result.metafile.outputs).map((file) => basename(file));
const script = outputs.find((file) => file.endsWith('.js'));
const style = outputs.find((file) => file.endsWith('.css'));
if (!script || !style) throw new Error(`the build wrote no script or no stylesheet: ${outputs.join(', ')}`);
await writeFile(
  `${dist}index.html`,
  `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Memory service</title>
<link rel="stylesheet" href="/dashboard/assets/${style}">
<script type="module" src="/dashboard/assets/${script}"></script>
</head>
<body><div id="app"></div></body>
</html>
`,
);
await writeFile(`${dist}.stamp`, stamp);
console.error(`[dashboard] built ${outputs.join(', ')}`);
