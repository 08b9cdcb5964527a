import { Writable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { query, sql } from '../../domain/sql.ts';
import { createLogger } from '../../infra/logger.ts';
import { signUp, startStack, type SignedUp, type Stack } from '../support/stack.ts';

// A database error in the logs says what went wrong, not which row: PostgreSQL's detail names the row's values.
let stack: Stack;
let a: SignedUp;
beforeAll(async () => {
  stack = await startStack({ relay: false, worker: false });
  a = await signUp(stack.api);
});
afterAll(async () => stack?.close());

describe('logged database errors', () => {
  it("keep their code, constraint and table, and leave out the row's values", async () => {
    const secret = 'project-name-nobody-may-read';
    const insert = () =>
      query(
        stack.orm.em.fork(),
        sql`insert into namespaces (org_id, id, name, created_at, updated_at)
          values (${a.org.id}, gen_random_uuid(), ${secret}, now(), now())`,
      );
    await insert();
    const failure = await insert().then(
      () => null,
      (err: unknown) => err as Error & { detail?: string },
    );
    // The driver's error holds the value (so the test would see a leak)...
    expect(failure?.detail).toContain(secret);
    const lines: string[] = [];
    const logger = createLogger('info', 'test', new Writable({ write: (chunk, _encoding, done) => (lines.push(String(chunk)), done()) }));
    logger.error({ err: failure }, 'unhandled error');
    logger.warn({ err: new Error('wrapped', { cause: failure }) }, 'wrapped');
    // ...and the log lines do not.
    expect(lines).toHaveLength(2);
    for (const line of lines) expect(line).not.toContain(secret);
    expect(JSON.parse(lines[0]!).err).toMatchObject({
      code: '23505',
      table: 'namespaces',
      message: expect.stringMatching(/duplicate key/),
    });
  });
});
