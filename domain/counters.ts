import type { EntityManager } from '@mikro-orm/postgresql';
import type { RawBuilder } from 'kysely';
import { query, sql } from './sql.ts';

const COUNTER_SHARDS = 64;

// A counter belongs to an org; its scope is the org itself or one of its namespaces.
export interface CounterDelta {
  orgId: string;
  scopeId: string;
  name: string;
  delta: number;
}

// Adds to sharded counters in one INSERT (embeddable in a larger statement). Every row of one call goes
// to the same shard and in a fixed key order, so two transactions can wait on each other but never deadlock.
// Deltas to the same counter added up, so one statement touches each counter row once.
export function sumDeltas(deltas: CounterDelta[]): CounterDelta[] {
  const summed = new Map<string, CounterDelta>();
  for (const d of deltas) {
    const key = `${d.scopeId}/${d.name}`;
    const prev = summed.get(key);
    summed.set(key, prev ? { ...prev, delta: prev.delta + d.delta } : d);
  }
  return [...summed.values()];
}

export function countersUpsert(deltas: CounterDelta[]): RawBuilder<unknown> | null {
  const live = deltas.filter((d) => d.delta !== 0).sort((a, b) => (a.scopeId + a.name < b.scopeId + b.name ? -1 : 1));
  if (live.length === 0) return null;
  const shard = Math.floor(Math.random() * COUNTER_SHARDS);
  return sql`insert into counters (org_id, scope_id, name, shard, value)
      select o, s, n, ${shard}, v from unnest(${live.map((d) => d.orgId)}::uuid[], ${live.map((d) => d.scopeId)}::uuid[],
        ${live.map((d) => d.name)}::text[],
        ${live.map((d) => d.delta)}::bigint[]) with ordinality as u(o, s, n, v, i)
      order by i
      on conflict (org_id, scope_id, name, shard) do update set value = counters.value + excluded.value`;
}

export async function bumpCounters(em: EntityManager, deltas: CounterDelta[]): Promise<void> {
  const statement = countersUpsert(deltas);
  if (statement) await query(em, statement);
}

// A counter's value as an expression, for reading it inside a larger statement (0 when it has no row).
export const counterValue = (orgId: string, scopeId: string | null, name: string): RawBuilder<unknown> =>
  sql`(select coalesce(sum(value), 0) from counters where org_id = ${orgId} and scope_id = ${scopeId} and name = ${name})`;

export async function readCounters(em: EntityManager, orgId: string, scopeId = orgId): Promise<Map<string, number>> {
  const rows = await query(
    em,
    sql<{
      name: string;
      value: string;
    }>`select name, sum(value)::bigint as value from counters where org_id = ${orgId} and scope_id = ${scopeId} group by name`,
  );
  return new Map(rows.map((r) => [r.name, Number(r.value)]));
}
