import { spawn, type ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';
import { inject } from 'vitest';
import { freePort, waitForPort } from './ports.ts';

export interface ServiceProcess {
  child: ChildProcess;
  // Its JSON log lines so far, parsed.
  logs: Record<string, unknown>[];
  // The port it serves HTTP on: the API's own, or the worker's metrics port.
  port: number;
  url: string;
  // SIGTERM and wait (a clean shutdown), or SIGKILL (no chance to clean up).
  stop(): Promise<void>;
  kill(): Promise<void>;
}

// A real API or worker process (api/main.ts, temporal/worker-main.ts) over the test run's Temporal server
// and the given database, with the worker using the run's prebuilt workflow bundle. `env` adds to or
// overrides what scripts/test.sh exported (codec and escrow keys).
export async function spawnService(kind: 'api' | 'worker', env: Record<string, string>): Promise<ServiceProcess> {
  const port = await freePort();
  const entry = kind === 'api' ? 'api/main.ts' : 'temporal/worker-main.ts';
  const child = spawn(process.execPath, [entry], {
    env: {
      ...process.env,
      TEMPORAL_ADDRESS: inject('temporalAddress'),
      WORKFLOW_BUNDLE_PATH: inject('workflowBundlePath'),
      EMBEDDING_PROVIDER: 'none',
      LOG_LEVEL: 'info',
      SIGNUPS_PER_ADDRESS_PER_HOUR: '0',
      WRITE_RATE_LIMIT_PER_MINUTE: '0',
      ...(kind === 'api' ? { PORT: String(port) } : { WORKER_METRICS_PORT: String(port) }),
      ...env,
    },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const logs: Record<string, unknown>[] = [];
  createInterface({ input: child.stdout! }).on('line', (line) => {
    try {
      logs.push(JSON.parse(line) as Record<string, unknown>);
    } catch {
      logs.push({ msg: line });
    }
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const end = async (signal: NodeJS.Signals) => {
    if (child.exitCode === null && child.signalCode === null) child.kill(signal);
    await exited;
  };
  await Promise.race([waitForPort(port, 90_000), exited.then(() => Promise.reject(new Error(`${entry} exited before it listened`)))]);
  return { child, logs, port, url: `http://127.0.0.1:${port}`, stop: () => end('SIGTERM'), kill: () => end('SIGKILL') };
}
