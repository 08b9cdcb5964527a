// Lexical search in one namespace of a large org, by the namespace's size and share: the two ways lexical.ts
// can search it, timed side by side on the same index. "Read whole": the namespace's document numbers read from
// the index and only its documents scored. "MaxScore": the org's best candidates, enough of them that about 2k + 8
// should be in the namespace, checked against their rows. Each of 100 queries runs both ways and the way the
// code chooses (`lexicalRanking`'s default), each of the three first in turn; the second of two rounds is
// reported, and all three must return the same ids and scores. k 10 is a search's default; k 100 is the list hybrid search reads.
// The org (agent memories, as bench/memories.ts saves them) is written straight into a scratch database with
// SQL, its postings staged as saves stage them and folded by the curator's own fold (domain/search/fold.ts):
// minutes instead of the half hour the API takes at a million.
//   ADMIN_DATABASE_URL=postgres://memsvc:memsvc@127.0.0.1:5433/postgres N=1000000 node bench/namespaces-at-scale.ts
// N (default 1,000,000); KEEP=1 keeps the scratch database and REUSE=1 searches the one kept.
import { compileFilters } from '../domain/store/filters.ts';
import { NAMESPACE_COUNTERS, ORG_COUNTERS } from '../domain/store/counters.ts';
import { analyze } from '../domain/store/analyzer.ts';
import { foldPostings } from '../domain/search/fold.ts';
import { lexicalRanking } from '../domain/search/lexical.ts';
import { query, sql } from '../domain/sql.ts';
import { migrate, openOrm } from '../infra/orm.ts';
import { agentMemoryGenerator } from './lib/agent-memories.ts';
import { writeStagedMemories } from './lib/agent-postings.ts';
import { Corpus } from './lib/corpus.ts';
import { scratchDatabase } from './lib/scale-org.ts';
import { summarize } from './lib/stats.ts';

const N = Number(process.env.N ?? 1_000_000);
const reuse = process.env.REUSE === '1';
// The namespaces' shares of the org; the last takes the rest.
const SHARES = [0.005, 0.01, 0.02, 0.04, 0.08, 0.16, 0.32];
const org = '00000000-0000-0000-0000-00000000b001';
const namespaceId = (j: number) => `00000000-0000-0000-0002-${String(j).padStart(12, '0')}`;
const namespaceOf = (i: number) => {
  const x = (i % 1000) / 1000;
  let edge = 0;
  for (const [j, share] of SHARES.entries()) if (x < (edge += share)) return j;
  return SHARES.length;
};

const scratch = await scratchDatabase(`memsvc_ns_bench_${N}`, { reuse });
const orm = await openOrm({ databaseUrl: scratch.url, poolMax: 2 });
const agent = agentMemoryGenerator(new Corpus(new URL('../../shared/data', import.meta.url).pathname, 11));
if (!reuse) {
  await migrate(orm);
  const exec = (statement: string) => orm.em.getConnection().execute(statement);
  let started = performance.now();
  await exec(
    `insert into orgs (id, slug, name, plan, created_at, updated_at) values ('${org}', 'ns-scale', 'ns-scale', 'enterprise', now(), now())`,
  );
  await exec(`insert into namespaces (id, org_id, name, created_at, updated_at)
    select ('00000000-0000-0000-0002-' || lpad(j::text, 12, '0'))::uuid, '${org}', 'project-' || j, now(), now()
    from generate_series(0, ${SHARES.length}) j`);
  const { lens } = await writeStagedMemories(
    orm.em,
    org,
    () => agent.memory(),
    N,
    (i) => namespaceId(namespaceOf(i)),
  );
  const lengths = new Map<number, { n: number; len: number }>();
  lens.forEach((len, i) => {
    const sum = lengths.get(namespaceOf(i)) ?? { n: 0, len: 0 };
    lengths.set(namespaceOf(i), { n: sum.n + 1, len: sum.len + len });
  });
  const counters = [...lengths].flatMap(([j, { n, len }]) => [
    `('${namespaceId(j)}', '${NAMESPACE_COUNTERS.live}', ${n})`,
    `('${namespaceId(j)}', '${NAMESPACE_COUNTERS.docLen}', ${len})`,
  ]);
  const total = [...lengths.values()].reduce((s, x) => s + x.len, 0);
  counters.push(`('${org}', '${ORG_COUNTERS.live}', ${N})`, `('${org}', '${ORG_COUNTERS.docLen}', ${total})`);
  await exec(
    `insert into counters (org_id, scope_id, name, shard, value) select '${org}', s::uuid, n, 0, v
      from (values ${counters.join(', ')}) as c(s, n, v)`,
  );
  console.log(`${N} memories written in ${((performance.now() - started) / 1000).toFixed(0)} s`);
  started = performance.now();
  while ((await foldPostings(orm.em.fork(), org)) > 0);
  await exec('vacuum analyze');
  console.log(`folded in ${((performance.now() - started) / 1000).toFixed(0)} s\n`);
}

const queries = Array.from({ length: 100 }, () => analyze(agent.query()));
const ways = { 'read whole': { namespaceRead: 'whole' }, MaxScore: { namespaceRead: 'candidates' }, chosen: {} } as const;
console.log('| namespace: memories (share) | k | read whole p50 / p95 ms | MaxScore p50 / p95 ms | chosen p50 / p95 ms |');
console.log('|---|---|---|---|---|');
for (let j = 0; j <= SHARES.length; j++) {
  const compiled = await compileFilters(orm.em.fork(), org, { namespace: `project-${j}` });
  const size = (
    await query(orm.em.fork(), sql<{ n: number }>`select count(*)::int as n from memories where namespace_id = ${namespaceId(j)}`)
  )[0]!.n;
  for (const k of [10, 100]) {
    let times: Record<string, number[]> = {};
    for (let round = 0; round < 2; round++) {
      times = {};
      for (const [q, terms] of queries.entries()) {
        const results: string[] = [];
        // Each way first in turn: the first to run a query reads its blocks, the others find them cached.
        const order = Object.entries(ways);
        for (const [name, options] of [...order.slice(q % order.length), ...order.slice(0, q % order.length)]) {
          const t = performance.now();
          const { ranked: hits } = await lexicalRanking(orm.em.fork(), org, terms, k, compiled, options);
          (times[name] ??= []).push(performance.now() - t);
          results.push(JSON.stringify(hits));
        }
        if (new Set(results).size !== 1) throw new Error(`the ways disagree on ${terms.join(' ')} in project-${j}`);
      }
    }
    const cell = (name: string) => {
      const s = summarize(times[name]!);
      return `${s.p50} / ${s.p95}`;
    };
    console.log(
      `| project-${j}: ${size} (${((100 * size) / N).toFixed(1)}%) | ${k} | ${cell('read whole')} | ${cell('MaxScore')} | ` +
        `${cell('chosen')} |`,
    );
  }
}
await orm.close();
await scratch.close(process.env.KEEP === '1' || reuse);
