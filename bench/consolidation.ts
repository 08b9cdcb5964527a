// Times a consolidation scan (the lexical part of detect: DETECT_SCAN_LIMIT memories, candidate pairs,
// similarities) on the benchmark org that bench/memories.ts seeded. Run after `bash scripts/bench.sh`
// with DATABASE_URL pointing at memsvc_bench.
import { findCandidates } from '../domain/consolidation/detect.ts';
import { query, sql } from '../domain/sql.ts';
import { openOrm } from '../infra/orm.ts';

const orm = await openOrm({ databaseUrl: process.env.DATABASE_URL ?? 'postgres://memsvc:memsvc@127.0.0.1:5433/memsvc_bench', poolMax: 2 });
const [org] = await query(
  orm.em.fork(),
  sql<{ org_id: string; n: string }>`select org_id, count(*) as n from memories group by org_id order by 2 desc limit 1`,
);
if (!org) throw new Error('no memories: run bash scripts/bench.sh first');
for (const [label, namespace] of [
  ['whole org', undefined],
  ['one project', 'project-0'],
] as const) {
  const times: number[] = [];
  let result;
  for (let i = 0; i < 5; i++) {
    const t0 = performance.now();
    result = await findCandidates(orm.em.fork(), org.org_id, namespace, 0.8);
    times.push(performance.now() - t0);
  }
  times.sort((a, b) => a - b);
  console.log(
    `detect scan, ${label} of an org with ${org.n} memories: scanned ${result!.scanned}, ${result!.proposals.length} ` +
      `proposals, ${result!.contradictions.length} contradiction candidates; median ${times[2]!.toFixed(0)} ms (of 5)`,
  );
}
await orm.close();
