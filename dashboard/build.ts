// Builds the dashboard into dashboard/dist: esbuild bundles src/main.tsx (Preact, and the TypeScript
// client of clients/typescript) and its CSS into content-hashed files, cached for good by browsers, and
// writes index.html naming them (no inline script, so the page's Content-Security-Policy forbids all).
// Each page is a chunk of its own, imported when first shown (src/app.tsx); the shell's chunks are named in
// index.html as module preloads, fetched alongside the entry. dist/chunks.json says which chunk imports which
// (dashboard/bundle.ts adds up what a first load fetches). Run by scripts/start.sh and scripts/test.sh, and
// skipped when nothing it reads changed since the last build: `node dashboard/build.ts`.
import { createHash } from 'node:crypto';
import { readdir, readFile, rm, writeFile, mkdir } from 'node:fs/promises';
import { basename, resolve } from 'node:path';
import { build, type Metafile, type Plugin } from 'esbuild';

const here = new URL('./', import.meta.url).pathname;
const dist = `${here}dist/`;
const inputs = [`${here}src`, `${here}../clients/typescript/src`, `${here}../package-lock.json`, `${here}build.ts`];

async function fingerprint(): Promise<string> {
  const hash = createHash('sha256');
  for (const input of inputs) {
    const files =
      input.endsWith('.json') || input.endsWith('.ts')
        ? [input]
        : (await readdir(input, { recursive: true, withFileTypes: true }))
            .filter((e) => e.isFile())
            .map((e) => `${e.parentPath}/${e.name}`)
            .sort();
    for (const file of files) hash.update(file).update(await readFile(file));
  }
  return hash.digest('hex');
}

const stamp = await fingerprint();
const built = await readFile(`${dist}.stamp`, 'utf8').catch(() => '');
if (built === stamp && !process.argv.includes('--force')) process.exit(0);

// standardwebhooks is CommonJS with no `sideEffects` field, so esbuild keeps it whole though only the client's
// verifyWebhook, which the dashboard never calls, uses it: declared free of side effects, it is left out.
const sideEffectFree = (name: string): Plugin => ({
  name: `side-effect-free:${name}`,
  setup(build) {
    build.onResolve({ filter: new RegExp(`^${name}$`) }, async ({ path, kind, importer, resolveDir, pluginData }) => {
      if (pluginData === name) return undefined;
      const resolved = await build.resolve(path, { kind, importer, resolveDir, pluginData: name });
      return resolved.errors.length ? { errors: resolved.errors } : { path: resolved.path, sideEffects: false };
    });
  },
});

await rm(dist, { recursive: true, force: true });
await mkdir(`${dist}assets`, { recursive: true });
const result = await build({
  entryPoints: [`${here}src/main.tsx`],
  absWorkingDir: resolve(here, '..'),
  bundle: true,
  format: 'esm',
  splitting: true,
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
  plugins: [sideEffectFree('standardwebhooks')],
});
// Each script's size, the module it is the chunk of (the entry, a page) if any, and its static imports: those
// are fetched before it runs, while its dynamic ones (pages) are fetched when shown.
const chunks: Record<string, { source: string | null; bytes: number; imports: string[] }> = {};
const statically = (imports: Metafile['outputs'][string]['imports']) => [
  ...new Set(imports.filter((i) => i.kind === 'import-statement').map((i) => basename(i.path))),
];
for (const [file, output] of Object.entries(result.metafile.outputs)) {
  if (!file.endsWith('.js')) continue;
  chunks[basename(file)] = {
    source: output.entryPoint ?? null,
    bytes: output.bytes,
    imports: statically(output.imports),
  };
}
const outputs = Object.keys(result.metafile.outputs).map((file) => basename(file));
const script = Object.keys(chunks).find((file) => chunks[file]!.source === 'dashboard/src/main.tsx');
const style = outputs.find((file) => file.endsWith('.css'));
if (!script || !style) throw new Error(`the build wrote no script or no stylesheet: ${outputs.join(', ')}`);
// What the entry imports statically, and what those import, fetched at once rather than one level at a time.
const preloads = new Set<string>();
const walk = (file: string): void => {
  for (const imported of chunks[file]!.imports) {
    if (preloads.has(imported)) continue;
    preloads.add(imported);
    walk(imported);
  }
};
walk(script);
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
${[...preloads].map((file) => `<link rel="modulepreload" href="/dashboard/assets/${file}">\n`).join('')}</head>
<body><div id="app"></div></body>
</html>
`,
);
await writeFile(`${dist}chunks.json`, `${JSON.stringify({ entry: script, style, chunks }, null, 2)}\n`);
await writeFile(`${dist}.stamp`, stamp);
console.error(`[dashboard] built ${script}, ${style} and ${outputs.length - 2} chunks`);
