import { spawn, type ChildProcess } from 'node:child_process';
import { freePort, waitForPort } from './ports.ts';

// A real Temporal dev server (the CLI built by scripts/lib.sh), with its state in `dbFile` so that a test
// can stop it and start it again on the same port.
export class TemporalDevServer {
  private child: ChildProcess | undefined;
  readonly bin: string;
  readonly port: number;
  readonly dbFile: string;
  // Server settings (dynamic config) that a test needs other than the defaults, such as a small history
  // length at which workflows are told to continue as new.
  readonly dynamicConfig: Record<string, string | number>;
  constructor(bin: string, port: number, dbFile: string, dynamicConfig: Record<string, string | number> = {}) {
    this.bin = bin;
    this.port = port;
    this.dbFile = dbFile;
    this.dynamicConfig = dynamicConfig;
  }

  static async create(bin: string, dbFile: string, dynamicConfig: Record<string, string | number> = {}): Promise<TemporalDevServer> {
    return new TemporalDevServer(bin, await freePort(), dbFile, dynamicConfig);
  }

  get address(): string {
    return `127.0.0.1:${this.port}`;
  }

  async start(): Promise<void> {
    this.child = spawn(
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
    await waitForPort(this.port);
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
