import { spawn } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually } from '../support/stack.ts';

// scripts/start.sh runs Temporal, the worker and the API each under `supervise` (scripts/lib.sh): a process that
// stops is started again, with backoff, and the log says so. Here it supervises a stand-in that records its pid.
let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'memsvc-supervise-'));
});
afterAll(async () => rm(dir, { recursive: true, force: true }));

const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

describe('supervise (scripts/start.sh)', () => {
  it('starts a process again when it dies, says so, and stops it with the script', async () => {
    const pidFile = join(dir, 'pid');
    // The stand-in writes its pid and then waits, as a server does.
    const standIn = `echo $$ > ${pidFile}; exec sleep 1000`;
    const script =
      `source scripts/lib.sh; trap stop_started EXIT; trap 'exit 130' INT TERM; supervise stand-in "" bash -c ` + `'${standIn}'; wait`;
    const run = spawn('bash', ['-c', script], { cwd: process.cwd(), stdio: ['ignore', 'ignore', 'pipe'] });
    let log = '';
    run.stderr!.on('data', (chunk: Buffer) => (log += chunk.toString()));
    const pidNow = async () => Number((await readFile(pidFile, 'utf8').catch(() => '')).trim()) || undefined;
    try {
      const first = await eventually(pidNow);
      expect(alive(first)).toBe(true);
      process.kill(first, 'SIGKILL');
      // Started again after a second, and the log says why.
      const second = await eventually(async () => {
        const pid = await pidNow();
        return pid !== first && pid;
      });
      expect(alive(second)).toBe(true);
      expect(log).toMatch(/stand-in stopped \(exit 137\); starting it again in 1 s/);
      process.kill(second, 'SIGKILL');
      const third = await eventually(async () => {
        const pid = await pidNow();
        return pid !== second && pid;
      });
      // The second crash came soon after the start: the wait doubles.
      expect(log).toMatch(/stand-in stopped \(exit 137\); starting it again in 2 s/);
      // The script stopped: the supervised process goes with it, and is not started again.
      const exited = new Promise((resolve) => run.once('exit', resolve));
      run.kill('SIGTERM');
      await exited;
      await eventually(async () => !alive(third));
      await new Promise((r) => setTimeout(r, 1500));
      expect(await pidNow()).toBe(third);
    } finally {
      if (run.exitCode === null) run.kill('SIGKILL');
    }
  });
});
