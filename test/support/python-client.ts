// The Python client (clients/python) as its users get it: its wheel and sdist built with the pinned tools, and a
// fresh venv with the wheel (and the extras asked for) installed from the wheels scripts/test.sh downloaded, so
// nothing is fetched here. scripts/test.sh (ensure_python_client) sets the variables this reads.
import { execFile } from 'node:child_process';
import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

const run = promisify(execFile);
const root = fileURLToPath(new URL('../../', import.meta.url));

const required = (name: string): string => {
  const value = process.env[name];
  if (!value) throw new Error(`${name} is not set: run the tests with \`bash scripts/test.sh\``);
  return value;
};

// Builds the wheel and sdist into `${work}/dist`; answers their file names, sorted.
export async function buildPythonClient(work: string): Promise<string[]> {
  const python = join(required('PYTHON_CLIENT_TOOLS'), 'bin', 'python');
  await run(python, ['-m', 'build', '--no-isolation', '--sdist', '--wheel', '--outdir', join(work, 'dist'), 'clients/python'], {
    cwd: root,
  });
  return (await readdir(join(work, 'dist'))).sort();
}

// A fresh venv at `${work}/venv` with the built wheel and `extras` installed; answers its python.
export async function pythonClientVenv(work: string, built: string[], extras: string[] = []): Promise<string> {
  await run(required('PYTHON_CLIENT_PYTHON'), ['-m', 'venv', join(work, 'venv')]);
  const python = join(work, 'venv', 'bin', 'python');
  const wheel = join(
    work,
    'dist',
    built.find((name) => name.endsWith('.whl'))!,
  );
  const requirement = extras.length ? `memory-service-client[${extras.join(',')}] @ file://${wheel}` : wheel;
  await run(python, ['-m', 'pip', 'install', '--quiet', '--no-index', '--find-links', required('PYTHON_CLIENT_WHEELS'), requirement]);
  return python;
}

// Runs a Python file with the venv's python and the environment given; answers what it printed.
export async function runPython(python: string, file: string, env: Record<string, string>): Promise<string> {
  const { stdout } = await run(python, [file], { env: { PATH: process.env.PATH!, ...env }, timeout: 180_000 });
  return stdout;
}

// Runs a script of test/support and reads its last line as JSON.
export async function runPythonScenario(python: string, script: string, env: Record<string, string>): Promise<Record<string, unknown>> {
  const stdout = await runPython(python, join(root, 'test/support', script), env);
  return JSON.parse(stdout.trim().split('\n').at(-1)!) as Record<string, unknown>;
}
