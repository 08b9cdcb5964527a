import { spawn, type ChildProcess } from 'node:child_process';
import { Connection } from '@temporalio/client';
import { freePort } from './ports.ts';

// A real Temporal dev server (the CLI built by scripts/lib.sh), with its state in `dbFile` so that a test
// can stop it and start it again on the same port.
export class TemporalDevServer {
  private child: ChildProcess | undefined;
  readonly bin: string;
  // Picked free before the first start, and again if that start fails: the server picks its other ports
  // (HTTP, metrics, membership) free too, so a server starting beside it can take ours in between.
  #port: number;
  #started = false;
  readonly dbFile: string;
  // Server settings (dynamic config) that a test needs other than the defaults, such as a small history
  // length at which workflows are told to continue as new.
  readonly dynamicConfig: Record<string, string | number>;
  constructor(bin: string, port: number, dbFile: string, dynamicConfig: Record<string, string | number> = {}) {
    this.bin = bin;
    this.#port = port;
    this.dbFile = dbFile;
    this.dynamicConfig = dynamicConfig;
  }

  static async create(bin: string, dbFile: string, dynamicConfig: Record<string, string | number> = {}): Promise<TemporalDevServer> {
    return new TemporalDevServer(bin, await freePort(), dbFile, dynamicConfig);
  }

  get port(): number {
    return this.#port;
  }

  get address(): string {
    return `127.0.0.1:${this.port}`;
  }

  // A first start that exits before its port opens is tried again on another free port; a restart keeps its port.
  async start(): Promise<void> {
    for (let attempt = 1; ; attempt++) {
      const exited = await this.#spawnUntilListening();
      if (!exited) break;
      if (this.#started || attempt === 3) throw new Error(`temporal dev server exited (${exited}) before listening on ${this.address}`);
      this.#port = await freePort();
    }
    this.#started = true;
  }

  // Resolves with how the child exited if it did so before its port opened, or with null once it listens.
  async #spawnUntilListening(): Promise<string | null> {
    const child = spawn(
      this.bin,
      // As scripts/lib.sh starts it: SQLite in WAL mode, eager activities.
      [
        'server',
        'start-dev',
        '--headless',
        '--ip',
        '127.0.0.1',
        '--port',
        String(this.port),
        '--db-filename',
        this.dbFile,
        '--sqlite-pragma',
        'journal_mode=wal',
        '--sqlite-pragma',
        'synchronous=normal',
        '--namespace',
        'default',
        '--search-attribute',
        'OrgId=Keyword',
        '--log-level',
        'error',
        ...Object.entries({ 'system.enableActivityEagerExecution': 'true', ...this.dynamicConfig }).flatMap(([key, value]) => [
          '--dynamic-config-value',
          `${key}=${value}`,
        ]),
      ],
      { stdio: ['ignore', 'ignore', 'inherit'] },
    );
    this.child = child;
    const exit = { how: '' };
    child.once('exit', (code, signal) => (exit.how = `code ${code}, signal ${signal}`));
    const deadline = Date.now() + 60_000;
    // A gRPC health check, not an open port: a process that took the port first would answer a plain connect.
    while (!exit.how) {
      if (await this.#answers()) return null;
      if (Date.now() > deadline) throw new Error(`temporal dev server not serving on ${this.address}`);
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
    this.child = undefined;
    return exit.how;
  }

  async #answers(): Promise<boolean> {
    try {
      const connection = await Connection.connect({ address: this.address, connectTimeout: 1_000 });
      try {
        await connection.healthService.check({});
        return true;
      } finally {
        await connection.close();
      }
    } catch {
      return false;
    }
  }

  // SIGTERM (a clean stop), or SIGKILL (a crash: no chance to finish anything); start() brings it back on the
  // same port over the same state.
  async stop(signal: 'SIGTERM' | 'SIGKILL' = 'SIGTERM'): Promise<void> {
    const child = this.child;
    if (!child || child.exitCode !== null) return;
    await new Promise<void>((resolve) => {
      child.once('exit', () => resolve());
      child.kill(signal);
    });
    this.child = undefined;
  }
}
