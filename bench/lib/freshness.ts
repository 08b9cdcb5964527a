// How soon a saved memory can be found by meaning: the time from a save's 201 until the transaction that wrote
// its vector committed.
import pg from 'pg';
import { summarize, type Summary } from './stats.ts';

export interface FreshnessRun {
  // Saves a memory in the org and answers its id.
  save: () => Promise<string>;
  // An open loop: saves start this often, whatever the earlier ones take.
  perSecond: number;
  count: number;
  // How often the poller looks for the vectors of the saves still waiting.
  pollMs: number;
}

// Each save's time to its vector (also in the order the saves were made), and the same to when the poller saw it
// (they differ by the poll's delay: the commit time's check). One poller asks for all the saves still waiting,
// every `pollMs`, in one query, and reads each found row's commit time (track_commit_timestamp, which
// scripts/lib.sh turns on in the project's cluster; PostgreSQL refuses the query without it). The poller's own load
// takes CPU the model needs: 10 ms costs about 0.05 cores, 250 ms little.
export async function freshness(
  orgId: string,
  { save, perSecond, count, pollMs }: FreshnessRun,
): Promise<Summary & { seen: Summary; inOrder: number[] }> {
  const db = new pg.Client({ connectionString: process.env.DATABASE_URL });
  await db.connect();
  // Each waiting save's 201 time and its place in the stream.
  const waiting = new Map<string, { at: number; i: number }>();
  const lags: number[] = [];
  const inOrder: number[] = new Array(count);
  const seen: number[] = [];
  let saving = true;
  const poller = (async () => {
    while (saving || waiting.size > 0) {
      if (waiting.size > 0) {
        const found = await db.query<{ memory_id: string; committed: string }>(
          `select memory_id, extract(epoch from pg_xact_commit_timestamp(xmin)) * 1000 as committed from memory_embeddings
            where org_id = $1 and memory_id = any($2::uuid[])`,
          [orgId, [...waiting.keys()]],
        );
        const now = Date.now();
        for (const { memory_id, committed } of found.rows) {
          const { at, i } = waiting.get(memory_id)!;
          lags.push((inOrder[i] = Number(committed) - at));
          seen.push(now - at);
          waiting.delete(memory_id);
        }
      }
      await new Promise((r) => setTimeout(r, pollMs));
    }
  })();
  const one = async (i: number) => {
    const id = await save();
    waiting.set(id, { at: Date.now(), i });
  };
  const saves: Promise<void>[] = [];
  const start = performance.now();
  for (let i = 0; i < count; i++) {
    saves.push(one(i));
    await new Promise((r) => setTimeout(r, Math.max(0, start + ((i + 1) * 1000) / perSecond - performance.now())));
  }
  await Promise.all(saves);
  saving = false;
  await poller;
  await db.end();
  return { ...summarize(lags), seen: summarize(seen), inOrder };
}
