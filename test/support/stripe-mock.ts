import { spawn, type ChildProcess } from 'node:child_process';
import { freePort, waitForPort } from './ports.ts';

// stripe-mock (the processor's own API simulator, built by scripts/lib.sh) on a free loopback port.
export async function startStripeMock(): Promise<{ url: string; stop: () => void }> {
  const bin = process.env.STRIPE_MOCK_BIN;
  if (!bin) throw new Error('STRIPE_MOCK_BIN is not set: run the suite with scripts/test.sh');
  const port = await freePort();
  const child: ChildProcess = spawn(bin, ['-http-port', String(port), '-https-port', '0'], { stdio: 'ignore' });
  await waitForPort(port);
  return { url: `http://127.0.0.1:${port}`, stop: () => child.kill('SIGTERM') };
}
