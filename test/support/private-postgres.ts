import { execFile } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import pg from 'pg';
import { freePort } from './ports.ts';

const run = promisify(execFile);

// A PostgreSQL cluster of one test's own, from the same binaries as the project's (PG_HOME, exported by
// scripts/test.sh), for tests that restart the server: the shared cluster serves every other test file
// at the same time. As root, PostgreSQL runs in a user namespace, as scripts/lib.sh does it.
export class PrivatePostgres {
  readonly url: string;
  private readonly dir: string;
  private readonly port: number;

  private constructor(dir: string, port: number) {
    this.dir = dir;
    this.port = port;
    this.url = `postgres://memsvc@127.0.0.1:${port}/memsvc`;
  }

  static async start(): Promise<PrivatePostgres> {
    const home = process.env.PG_HOME;
    if (!home) throw new Error('PG_HOME is not set: run the suite with scripts/test.sh');
    const server = new PrivatePostgres(await mkdtemp(join(tmpdir(), 'memsvc-pg-')), await freePort());
    await server.pg('initdb', ['-D', server.data, '-U', 'memsvc', '--auth=trust', '-E', 'UTF8', '--locale=C.UTF-8', '--no-data-checksums']);
    await server.ctl('start');
    const admin = new pg.Client({ connectionString: server.url.replace(/\/memsvc$/, '/postgres') });
    await admin.connect();
    await admin.query('create database memsvc');
    await admin.end();
    return server;
  }

  private get data(): string {
    return join(this.dir, 'data');
  }

  private async pg(bin: string, args: string[]): Promise<void> {
    const path = join(process.env.PG_HOME!, 'bin', bin);
    const asOwner = process.getuid?.() === 0;
    await run(asOwner ? 'unshare' : path, asOwner ? ['--user', '--map-user=1000', '--map-group=1000', path, ...args] : args);
  }

  private ctl(action: 'start' | 'restart' | 'stop'): Promise<void> {
    const options = `-p ${this.port} -k ${this.dir} -c listen_addresses=127.0.0.1`;
    return this.pg('pg_ctl', ['-D', this.data, '-w', '-m', 'fast', '-o', options, '-l', join(this.dir, 'server.log'), action]);
  }

  // The server stopped (every connection cut, new ones refused) and started again on the same port, same data.
  down(): Promise<void> {
    return this.ctl('stop');
  }

  up(): Promise<void> {
    return this.ctl('start');
  }

  // A real restart: every connection is cut, and the server is back on the same port.
  restart(): Promise<void> {
    return this.ctl('restart');
  }

  async stop(): Promise<void> {
    await this.ctl('stop').catch(() => undefined);
    await rm(this.dir, { recursive: true, force: true });
  }
}
