import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadCranfield } from '../../bench/quality/collections.ts';
import { decodeBlock } from '../../domain/search/blocks.ts';
import { compactPostings, foldPostings, RENUMBER_FLOOR, RENUMBER_RATIO } from '../../domain/search/fold.ts';
import { scoringBufferBytes } from '../../domain/search/scoring.ts';
import { query, sql } from '../../domain/sql.ts';
import { Bm25Reference } from '../support/bm25-reference.ts';
import { eventually, signUp, startStack, type SignedUp, type Stack } from '../support/stack.ts';

// Renumbering an org's documents densely (domain/search/fold.ts): compaction does it once the numbers run ahead of the
// live memories, a fold before its numbers would pass the limit, and searches find the same memories with the same
// scores before, during and after. Own file: the scoring buffers are the process's, and the first test needs them as
// no search has grown them. The relay is off, so nothing folds but these tests.
let stack: Stack;
const DATA = new URL('../../../shared/data', import.meta.url).pathname;
const docs = loadCranfield(DATA).docs.slice(0, 120);
const QUERIES = ['boundary layer transition', 'supersonic flow over a flat plate with heat transfer', 'shock wave shock', 'pressure'];

interface Org {
  who: SignedUp;
  reference: Bm25Reference;
  ids: string[];
}

async function seed(texts: string[], org?: Org): Promise<Org> {
  const into = org ?? { who: await signUp(stack.api), reference: new Bm25Reference(), ids: [] };
  for (const [i, content] of texts.entries()) {
    const res = await stack.api.post('/api/memories', {
      token: into.who.token,
      body: { content, namespace: i % 2 ? 'odd' : 'even', tags: [`t${i % 3}`] },
    });
    expect(res.status).toBe(201);
    into.reference.add(res.body.id, res.body.content);
    into.ids.push(res.body.id);
  }
  return into;
}

const db = () => stack.orm.em.fork();
async function foldAll(org: Org): Promise<void> {
  while ((await foldPostings(db(), org.who.org.id)) > 0);
}
const state = async (org: Org) =>
  (
    await query(
      db(),
      sql<{ next_docnum: number; numbering: number }>`select next_docnum, numbering from lexical_state where org_id = ${org.who.org.id}`,
    )
  )[0]!;
const setNext = (org: Org, next: number) =>
  query(db(), sql`update lexical_state set next_docnum = ${next} where org_id = ${org.who.org.id}`);
const docnums = async (org: Org) =>
  (await query(db(), sql<{ docnum: number }>`select docnum from lexical_docs where org_id = ${org.who.org.id} order by docnum`)).map(
    (r) => r.docnum,
  );
async function remove(org: Org, id: string): Promise<void> {
  expect((await stack.api.delete(`/api/memories/${id}`, { token: org.who.token })).status).toBe(204);
  org.reference.remove(id);
}
// An org whose first `before` documents are numbered from 0 and the next `after` past three times the renumbering
// floor, all folded, with the first `removed` deleted: the next compaction renumbers it.
async function pastTheFloor(before: number, after: number, removed: number): Promise<Org> {
  const org = await seed(docs.slice(0, before).map((d) => d.text));
  await foldAll(org);
  await setNext(org, 3 * RENUMBER_FLOOR);
  await seed(
    docs.slice(before, before + after).map((d) => d.text),
    org,
  );
  await foldAll(org);
  for (const id of org.ids.slice(0, removed)) await remove(org, id);
  return org;
}
async function edit(org: Org, id: string, content: string): Promise<void> {
  expect((await stack.api.patch(`/api/memories/${id}`, { token: org.who.token, body: { content } })).status).toBe(200);
  org.reference.add(id, content);
}

type Hit = { id: string; score: number };
const search = async (org: Org, body: Record<string, unknown>): Promise<Hit[]> => {
  const res = await stack.api.post('/api/memories/search', { token: org.who.token, body: { k: 10, ...body } });
  expect(res.status).toBe(200);
  return res.body.hits.map((h: Hit) => ({ id: h.id, score: h.score }));
};
// Every query unfiltered (as the oracle ranks it), as of now, and in a namespace with a tag; and the bulk search.
async function answers(org: Org): Promise<{ plain: Hit[][]; asOf: Hit[][]; filtered: Hit[][]; bulk: Hit[][] }> {
  const found = { plain: [] as Hit[][], asOf: [] as Hit[][], filtered: [] as Hit[][], bulk: [] as Hit[][] };
  for (const q of QUERIES) {
    const hits = await search(org, { query: q });
    expect(hits.map((h) => h.id)).toEqual(org.reference.search(q, 10).map((e) => e.id));
    found.plain.push(hits);
    found.asOf.push(await search(org, { query: q, as_of: Date.now() }));
    found.filtered.push(await search(org, { query: q, namespace: 'odd', tags: ['t1'] }));
  }
  const bulk = await stack.api.post('/api/memories/search/bulk', { token: org.who.token, body: { queries: QUERIES, k: 10 } });
  expect(bulk.status).toBe(200);
  found.bulk = bulk.body.results.map((r: { hits: Hit[] }) => r.hits.map((h) => ({ id: h.id, score: h.score })));
  expect(found.bulk).toEqual(found.plain);
  return found;
}

// Every block ascending, keyed by its first number, and holding only live documents.
async function expectBlocksOf(org: Org, live: number[]): Promise<void> {
  const known = new Set(live);
  const blocks = await query(
    db(),
    sql<{
      first_docnum: number;
      docs: number;
      wide: boolean;
      data: Buffer;
    }>`select first_docnum, docs, wide, data from lexical_blocks where org_id = ${org.who.org.id}`,
  );
  expect(blocks.length).toBeGreaterThan(0);
  for (const b of blocks) {
    const numbers = [...decodeBlock(b).docnums];
    expect(numbers[0]).toBe(b.first_docnum);
    for (let i = 1; i < numbers.length; i++) expect(numbers[i]).toBeGreaterThan(numbers[i - 1]!);
    for (const d of numbers) expect(known.has(d)).toBe(true);
  }
}

beforeAll(async () => {
  stack = await startStack({ relay: false, env: { WRITE_RATE_LIMIT_PER_MINUTE: '0' } });
}, 60_000);
afterAll(async () => stack?.close());

describe('renumbering the documents of an org', () => {
  it('numbers the live documents densely at compaction once the numbers run ahead, and the buffers follow them', async () => {
    const before = scoringBufferBytes();
    const org = await seed(docs.slice(0, 40).map((d) => d.text));
    await foldAll(org);
    // Every content edit takes a new number: here as if many had.
    await setNext(org, 2 * RENUMBER_RATIO * RENUMBER_FLOOR);
    await seed(
      docs.slice(40, 80).map((d) => d.text),
      org,
    );
    await foldAll(org);
    for (const id of org.ids.slice(0, 10)) await remove(org, id);
    const dropped = await compactPostings(db(), org.who.org.id);
    await answers(org);
    // The searches needed no more than the buffers' first size: they are sized by the documents' numbers, now 0-69.
    expect(scoringBufferBytes()).toBe(before);

    expect(dropped).toBe(10);
    const live = await docnums(org);
    expect(live).toEqual(Array.from({ length: 70 }, (_, i) => i));
    // Compaction's marks of dead documents are as many as the next number.
    expect(await state(org)).toEqual({ next_docnum: 70, numbering: 1 });
    expect(
      (await query(db(), sql<{ n: number }>`select count(*)::int as n from lexical_tombstones where org_id = ${org.who.org.id}`))[0]!.n,
    ).toBe(0);
    await expectBlocksOf(org, live);
  });

  it('finds the same memories with the same scores before and after a renumbering', async () => {
    const org = await seed(docs.slice(0, 60).map((d) => d.text));
    await foldAll(org);
    await setNext(org, 3 * RENUMBER_FLOOR);
    for (const [i, id] of org.ids.slice(0, 20).entries()) await edit(org, id, `${docs[i]!.text} revised boundary layer pressure`);
    for (const id of org.ids.slice(20, 30)) await remove(org, id);
    await seed(
      docs.slice(60, 90).map((d) => d.text),
      org,
    );
    await foldAll(org);
    const found = await answers(org);

    expect(await compactPostings(db(), org.who.org.id)).toBe(30);
    expect(await state(org)).toEqual({ next_docnum: 80, numbering: 1 });
    await expectBlocksOf(org, await docnums(org));
    expect(await answers(org)).toEqual(found);
    // Compaction leaves numbers that have not run ahead as they are.
    expect(await compactPostings(db(), org.who.org.id, true)).toBe(0);
    expect((await state(org)).numbering).toBe(1);
  });

  it("folds an org whose next document number is at int4's end, renumbering first", async () => {
    const org = await seed(docs.slice(0, 30).map((d) => d.text));
    await foldAll(org);
    for (const id of org.ids.slice(0, 5)) await remove(org, id);
    await setNext(org, 2 ** 31 - 10);
    await seed(
      docs.slice(30, 60).map((d) => d.text),
      org,
    );
    expect(await foldPostings(db(), org.who.org.id)).toBe(30);
    expect(await state(org)).toEqual({ next_docnum: 55, numbering: 1 });
    const live = await docnums(org);
    expect(live).toEqual(Array.from({ length: 55 }, (_, i) => i));
    await expectBlocksOf(org, live);
    await answers(org);
  });

  it('answers a search that read the index before a renumbering and looks its documents up after it as one after it', async () => {
    // A plain search and one as of now (as-of.ts looks the numbers up its own way), each in an org of its own.
    for (const asOf of [false, true]) {
      const org = await pastTheFloor(40, 40, 20);
      const found = await answers(org);

      // The renumbering holds lexical_docs locked until it commits: the search that holds the API's search slot reads
      // the index (blocks, tombstones, next number) as it was, then waits to look its candidates' numbers up, and reads
      // them renumbered; the searches after it wait for the slot.
      const asked = QUERIES.map((q) => (asOf ? { query: q, as_of: Date.now() } : { query: q }));
      let searches: Promise<Hit[][]> = Promise.resolve([]);
      await db().transactional(async (tx) => {
        await query(tx, sql`lock table lexical_docs in access exclusive mode`);
        searches = Promise.all(asked.map((body) => search(org, body)));
        await eventually(
          async () =>
            (
              await query(
                db(),
                sql<{
                  n: number;
                }>`select count(*)::int as n from pg_stat_activity
                    where datname = current_database() and wait_event_type = 'Lock' and query like '%lexical_docs%'`,
              )
            )[0]!.n > 0,
        );
        expect(await compactPostings(tx, org.who.org.id)).toBe(20);
      });
      expect(await searches).toEqual(asOf ? found.asOf : found.plain);
      expect(await state(org)).toEqual({ next_docnum: 60, numbering: 1 });
    }
  });

  it('waits for the next compaction while an edit holds a document; an edit that waited for it tombstones the new number', async () => {
    const org = await pastTheFloor(30, 30, 10);

    // A transaction holding one document's row, as an edit or a delete does until it commits.
    const client = new pg.Client({ connectionString: stack.config.DATABASE_URL });
    await client.connect();
    try {
      await client.query('begin');
      await client.query('select 1 from lexical_docs where org_id = $1 and memory_id = $2 for update', [org.who.org.id, org.ids[40]]);
      expect(await compactPostings(db(), org.who.org.id)).toBe(0);
      expect((await state(org)).numbering).toBe(0);
      await client.query('commit');
    } finally {
      await client.end();
    }

    // An edit and a delete that start while the renumbering is under way wait for its commit, then find the new numbers.
    const [edited, deleted] = [org.ids[45]!, org.ids[50]!];
    const content = 'shock wave interaction with a boundary layer, revised';
    let editing: Promise<{ status: number }> = Promise.resolve({ status: 0 });
    let deleting: Promise<{ status: number }> = Promise.resolve({ status: 0 });
    await db().transactional(async (tx) => {
      expect(await compactPostings(tx, org.who.org.id)).toBe(10);
      editing = stack.api.patch(`/api/memories/${edited}`, { token: org.who.token, body: { content } });
      deleting = stack.api.delete(`/api/memories/${deleted}`, { token: org.who.token });
      await new Promise((r) => setTimeout(r, 500));
    });
    expect((await editing).status).toBe(200);
    expect((await deleting).status).toBe(204);
    org.reference.add(edited, content);
    org.reference.remove(deleted);
    // Memories 10-59 took 0-49 in order: the edited one 35, the deleted one 40.
    expect(await state(org)).toEqual({ next_docnum: 50, numbering: 1 });
    const tombstones = await query(
      db(),
      sql<{ docnum: number }>`select docnum from lexical_tombstones where org_id = ${org.who.org.id} order by docnum`,
    );
    expect(tombstones.map((t) => t.docnum)).toEqual([35, 40]);
    await answers(org);
    await foldAll(org);
    await answers(org);
  });
});
