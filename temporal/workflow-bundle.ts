// The workflow code the worker runs, bundled ahead of time. A worker bundling workflows/ itself when it starts
// runs webpack in its own process: seconds of CPU, and about 215 MB more peak memory (569 against 354 MB for a
// worker without the model, bench/memories.ts at 10,000), which the process keeps as its high-water mark.
//   node temporal/workflow-bundle.ts <file>   writes the bundle unless the file is already current
import { bundleWorkflowCode, DefaultLogger } from '@temporalio/worker';
import { createHash } from 'node:crypto';
import { readdir, readFile, writeFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { FAILURE_CONVERTER_PATH } from './data-converter.ts';
import { WORKFLOW_INTERCEPTORS_PATH, WORKFLOWS_PATH } from './worker.ts';

async function buildWorkflowBundle(): Promise<string> {
  const bundle = await bundleWorkflowCode({
    workflowsPath: WORKFLOWS_PATH,
    workflowInterceptorModules: [WORKFLOW_INTERCEPTORS_PATH],
    failureConverterPath: FAILURE_CONVERTER_PATH,
    logger: new DefaultLogger('WARN'),
  });
  return bundle.code;
}

// What the bundle is made of: the workflows (which import only each other and @temporalio/workflow at run
// time: test/unit/layering.test.ts), the failure converter and the locked dependencies.
async function fingerprint(): Promise<string> {
  const hash = createHash('sha256');
  const dir = new URL('../workflows/', import.meta.url);
  const files = (await readdir(dir, { recursive: true, withFileTypes: true })).filter((e) => e.isFile());
  for (const name of files.map((e) => `${e.parentPath}/${e.name}`).sort()) hash.update(name).update(await readFile(name));
  hash.update(await readFile(FAILURE_CONVERTER_PATH));
  hash.update(await readFile(new URL('../package-lock.json', import.meta.url)));
  return hash.digest('hex');
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const out = process.argv[2];
  if (!out) throw new Error('usage: node temporal/workflow-bundle.ts <file>');
  const stamp = `// bundle of ${await fingerprint()}\n`;
  const current = await readFile(out, 'utf8').then(
    (code) => code.startsWith(stamp),
    () => false,
  );
  if (!current) {
    await writeFile(out, stamp + (await buildWorkflowBundle()));
    console.log(`[workflows] bundled into ${out}`);
  }
}
