// Renumbering an org's documents (domain/search/fold.ts) at the moment compaction first does it: N agent memories
// (as bench/memories.ts saves them) folded, every one then edited once (tombstoned, staged again and folded under a
// new number, the tombstones compacted away), and one more, so that the next number passes RENUMBER_RATIO times the
// live memories and every document moves. Reports how long the renumbering's transaction takes (the org's
// lexical_state row and, from its first read, its documents' rows are locked throughout), and lexical searches of
// the org beside it, p50 / max, against the same searches before it: they read without waiting, and one that
// straddles the renumbering starts over.
//   ADMIN_DATABASE_URL=postgres://memsvc:memsvc@127.0.0.1:5433/postgres N=100000 node bench/renumbering.ts
import { compileFilters } from '../domain/store/filters.ts';
import { NAMESPACE_COUNTERS, ORG_COUNTERS } from '../domain/store/counters.ts';
import { analyze } from '../domain/store/analyzer.ts';
import { compactPostings, foldPostings } from '../domain/search/fold.ts';
import { lexicalRanking } from '../domain/search/lexical.ts';
import { query, sql } from '../domain/sql.ts';
import { migrate, openOrm } from '../infra/orm.ts';
import { agentMemoryGenerator } from './lib/agent-memories.ts';
import { writeStagedMemories } from './lib/agent-postings.ts';
import { Corpus } from './lib/corpus.ts';
import { scratchDatabase } from './lib/scale-org.ts';
import { summarize } from './lib/stats.ts';

const N = Number(process.env.N ?? 100_000);
const org = '00000000-0000-0000-0000-00000000b002';
const namespace = '00000000-0000-0000-0002-00000000b002';

const scratch = await scratchDatabase(`memsvc_renumber_bench_${N}`);
const orm = await openOrm({ databaseUrl: scratch.url, poolMax: 4 });
const agent = agentMemoryGenerator(new Corpus(new URL('../../shared/data', import.meta.url).pathname, 11));
const exec = (statement: string) => orm.em.getConnection().execute(statement);
const seconds = (since: number) => ((performance.now() - since) / 1000).toFixed(1);
const foldAll = async () => {
  while ((await foldPostings(orm.em.fork(), org)) > 0);
};
// Every folded memory of `ids` tombstoned and staged again, as an edit of its content leaves it.
const edit = (ids: string[]) =>
  exec(`with gone as (delete from lexical_docs where org_id = '${org}' and memory_id = any('{${ids.join(',')}}'::uuid[]) returning docnum),
          dead as (insert into lexical_tombstones (org_id, docnum) select '${org}', docnum from gone)
        insert into lexical_staged (org_id, memory_id, doc_len, tfs)
        select org_id, memory_id, doc_len, tfs from staged_copy where memory_id = any('{${ids.join(',')}}'::uuid[])`);

try {
  await migrate(orm);
  let started = performance.now();
  await exec(
    `insert into orgs (id, slug, name, plan, created_at, updated_at) values ('${org}', 'renumber', 'renumber', 'enterprise', now(), now())`,
  );
  await exec(
    `insert into namespaces (id, org_id, name, created_at, updated_at) values ('${namespace}', '${org}', 'default', now(), now())`,
  );
  const { ids: all, lens } = await writeStagedMemories(
    orm.em,
    org,
    () => agent.memory(),
    N,
    () => namespace,
  );
  const total = lens.reduce((sum, len) => sum + len, 0);
  await exec(`insert into counters (org_id, scope_id, name, shard, value) values
    ('${org}', '${org}', '${ORG_COUNTERS.live}', 0, ${N}), ('${org}', '${org}', '${ORG_COUNTERS.docLen}', 0, ${total}),
    ('${org}', '${namespace}', '${NAMESPACE_COUNTERS.live}', 0, ${N}), ('${org}', '${namespace}', '${NAMESPACE_COUNTERS.docLen}', 0,
      ${total})`);
  await exec(`create table staged_copy as select * from lexical_staged`);
  await foldAll();
  console.log(`${N} memories written and folded in ${seconds(started)} s`);
  started = performance.now();
  for (let at = 0; at < N; at += 10_000) await edit(all.slice(at, at + 10_000));
  await foldAll();
  await compactPostings(orm.em.fork(), org, true);
  await edit(all.slice(0, 1));
  await foldAll();
  await exec('vacuum analyze');
  const state = async () =>
    (
      await query(
        orm.em.fork(),
        sql<{ next_docnum: number; numbering: number }>`select next_docnum, numbering from lexical_state where org_id = ${org}`,
      )
    )[0]!;
  const blocks = async () =>
    (await query(orm.em.fork(), sql<{ n: number }>`select count(*)::int as n from lexical_blocks where org_id = ${org}`))[0]!.n;
  console.log(`every memory edited once in ${seconds(started)} s: ${JSON.stringify(await state())}, ${await blocks()} blocks\n`);

  const compiled = await compileFilters(orm.em.fork(), org, {});
  const queries = Array.from({ length: 200 }, () => analyze(agent.query()));
  const search = async (i: number) => {
    const t = performance.now();
    await lexicalRanking(orm.em.fork(), org, queries[i % queries.length]!, 10, compiled);
    return performance.now() - t;
  };
  const searchEach = async () => {
    const times: number[] = [];
    for (let i = 0; i < queries.length; i++) times.push(await search(i));
    return times;
  };
  const before = await searchEach();
  let done = false;
  started = performance.now();
  const renumbering = compactPostings(orm.em.fork(), org).then((dropped) => ({ dropped, took: performance.now() - started }));
  void renumbering.then(
    () => (done = true),
    () => (done = true),
  );
  const beside: number[] = [];
  for (let i = 0; !done; i++) beside.push(await search(i));
  const { dropped, took } = await renumbering;
  const show = (times: number[]) => {
    const s = summarize(times);
    return `p50 ${s.p50.toFixed(1)} ms, max ${Math.max(...times).toFixed(1)} ms over ${times.length}`;
  };
  console.log(
    `renumbering (compactPostings): ${took.toFixed(0)} ms, ${dropped} tombstones dropped, ${JSON.stringify(await state())}, ` +
      `${await blocks()} blocks`,
  );
  console.log(`searches before it: ${show(before)}`);
  console.log(`searches beside it: ${show(beside)}`);
  console.log(`searches after it: ${show(await searchEach())}`);
} finally {
  await orm.close();
  await scratch.close();
}
