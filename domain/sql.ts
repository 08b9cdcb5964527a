import { AsyncLocalStorage } from 'node:async_hooks';
import type { EntityManager } from '@mikro-orm/postgresql';
import { sql, type RawBuilder } from 'kysely';

export { sql };

// The statements' time of one unit of work (withQueryTime), summed over the connections it held at once.
const queryTime = new AsyncLocalStorage<{ ms: number }>();

// The one way to run hand-written SQL: a kysely `sql` template with bound parameters (arrays travel as
// PostgreSQL arrays), on the EntityManager's connection, so it joins the current transaction if any.
export async function query<T>(em: EntityManager, statement: RawBuilder<T>): Promise<T[]> {
  const meter = queryTime.getStore();
  const started = performance.now();
  try {
    return (await statement.execute(em.getKysely())).rows;
  } finally {
    if (meter) meter.ms += performance.now() - started;
  }
}

// Runs `work`, telling `spent` how long its statements took in all, however it ends: a search that runs its lists side
// by side holds a connection, and a database backend, for each.
export async function withQueryTime<T>(work: () => Promise<T>, spent: (ms: number) => void): Promise<T> {
  const meter = { ms: 0 };
  try {
    return await queryTime.run(meter, work);
  } finally {
    spent(meter.ms);
  }
}

export async function queryOne<T>(em: EntityManager, statement: RawBuilder<T>): Promise<T | undefined> {
  return (await query(em, statement))[0];
}

// pg hands timestamps and bigints back as text through this connection.
export const toDate = (value: string | Date): Date => (value instanceof Date ? value : new Date(value));
export const toDateOrNull = (value: string | Date | null): Date | null => (value === null ? null : toDate(value));

// A user's text inside a LIKE pattern matches itself only: %, _ and the escape character are escaped.
export const escapeLike = (text: string): string => text.replace(/[\\%_]/g, (c) => `\\${c}`);

// The database could not serve a statement in time or at all (not this statement's fault): no free connection
// within the acquire deadline, a statement or idle transaction cut off by its deadline (SQLSTATE 57014, 25P03), or
// a server that cannot be reached, is shutting down or starting (class 08, 57P01-57P03, a refused or dropped
// connection, or a pooled client whose connection broke before this statement: pg's "... is not queryable").
export type DatabaseTrouble = 'busy' | 'timeout' | 'down';

const DOWN_CODES = new Set(['57P01', '57P02', '57P03', 'ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EHOSTUNREACH']);

export function databaseTrouble(err: unknown): DatabaseTrouble | null {
  if (!(err instanceof Error)) return null;
  const code = String((err as { code?: unknown }).code ?? '');
  if (err.message === 'timeout exceeded when trying to connect') return 'busy';
  if (code === '57014' || code === '25P03') return 'timeout';
  if (DOWN_CODES.has(code) || code.startsWith('08') || /^Connection terminated|is not queryable$/.test(err.message)) return 'down';
  return null;
}

// Deletes the rows of `table` whose ctids `candidates` selects (one bounded batch: the select carries its
// limit) and returns how many went. Batched deletes (maintenance, erasure) all go through here.
export async function deleteByCtid(em: EntityManager, table: string, candidates: RawBuilder<unknown>): Promise<number> {
  const rows = await query(
    em,
    sql<{
      n: number;
    }>`with gone as (delete from ${sql.table(table)} where ctid = any(array(${candidates})) returning 1) select count(*)::int as n
      from gone`,
  );
  return rows[0]!.n;
}
