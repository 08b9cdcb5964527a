import { mkdtemp, rm } from 'node:fs/promises';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, expect, it } from 'vitest';
import { inject } from 'vitest';
import { freePort } from '../support/ports.ts';
import { TemporalDevServer } from '../support/temporal-server.ts';

// The suite's own helper: a dev server whose port another process took between the pick and the start (servers
// starting side by side pick their ports free too) starts on another port instead of failing the run.
let dir: string | undefined;
let held: Server | undefined;
let temporal: TemporalDevServer | undefined;
afterAll(async () => {
  await temporal?.stop();
  held?.close();
  if (dir) await rm(dir, { recursive: true, force: true });
});

it('starts on another free port when its own is taken, and restarts on the port it got', async () => {
  dir = await mkdtemp(join(tmpdir(), 'memsvc-temporal-'));
  const port = await freePort();
  held = createServer((socket) => socket.destroy());
  await new Promise<void>((resolve) => held!.listen(port, '127.0.0.1', resolve));
  temporal = new TemporalDevServer(inject('temporalBin'), port, join(dir, 'temporal.db'));
  await temporal.start();
  expect(temporal.port).not.toBe(port);
  const started = temporal.port;
  await temporal.stop();
  await temporal.start();
  expect(temporal.port).toBe(started);
}, 120_000);
