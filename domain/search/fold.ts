import type { EntityManager } from '@mikro-orm/postgresql';
import { counterValue } from '../counters.ts';
import { curateJob } from '../store/curate.ts';
import { ORG_COUNTERS } from '../store/counters.ts';
import type { DocumentPlace } from '../store/postings.ts';
import { enqueueJobs } from '../outbox/enqueue.ts';
import { query, queryOne, sql } from '../sql.ts';
import { postingsByTerm, type StagedMemory } from './staged-postings.ts';
import { decodeBlock, encodeBlock, mergeBlocks, type StoredBlock } from './blocks.ts';

// Folding: the org's curator moves the postings saves staged (one lexical_staged row per memory, postings.ts)
// into per-term blocks (lexical_blocks), giving each folded memory the next document number of the org. A search
// reads a term's blocks and its staged memories, so folding changes how fast a memory is found, never whether.

// Memories folded per transaction.
export const FOLD_MEMORIES = 2_000;
// A block of this many postings is final; smaller ones are merged with the fold's new postings while the block
// before is at most MERGE_RATIO times the merged size, so a term keeps a few small blocks of geometrically
// growing size and each posting is rewritten a logarithmic number of times (the way an LSM tree merges).
export const BLOCK_FULL = 4_096;
const MERGE_RATIO = 2;
// Document numbers stay below this: a search numbers the memories not folded yet from the org's next document
// number up, and its cursors take 2^31 - 1 for the end of a list.
export const DOCNUM_LIMIT = 2 ** 30;

// The org's next document number, with its row locked for the transaction: the one-folder-per-org lock.
async function lockState(tx: EntityManager, orgId: string): Promise<number> {
  await query(tx, sql`insert into lexical_state (org_id) values (${orgId}) on conflict do nothing`);
  return (await queryOne(tx, sql<{ next_docnum: number }>`select next_docnum from lexical_state where org_id = ${orgId} for update`))!
    .next_docnum;
}

// One fold of at most FOLD_MEMORIES memories, in one transaction. Each memory is locked FOR SHARE, SKIP LOCKED:
// one being edited, merged or deleted right now is left for the next fold, and one locked here makes its editor
// wait until the fold commits and then find its document number (to tombstone, see postings.ts). Its postings
// are the staged row deleted here, so what is folded is exactly what was searchable a moment before. Returns how
// many memories it folded; fewer than FOLD_MEMORIES says that no more were staged (or some were locked).
export async function foldPostings(em: EntityManager, orgId: string): Promise<number> {
  return em.transactional(async (tx) => {
    let next = await lockState(tx, orgId);
    const staged = await query(
      tx,
      sql<{ memory_id: string }>`select memory_id from lexical_staged where org_id = ${orgId} limit ${FOLD_MEMORIES}`,
    );
    if (staged.length === 0) return 0;
    if (next + staged.length > DOCNUM_LIMIT) next = await renumberBeforeFold(tx, orgId, staged.length);
    const memories = await query(
      tx,
      sql<DocumentPlace & { id: string }>`select id, namespace_id, user_id, agent_id, run_id from memories
        where org_id = ${orgId} and id = any(${staged.map((s) => s.memory_id)}::uuid[]) order by id for share skip locked`,
    );
    const rows = await query(
      tx,
      sql<{ memory_id: string; doc_len: number; tfs: string }>`delete from lexical_staged
        where org_id = ${orgId} and memory_id = any(${memories.map((m) => m.id)}::uuid[]) returning memory_id, doc_len, tfs::text`,
    );
    if (rows.length === 0) return 0;

    // Document numbers in the order of the locked memories (by id), so each term's postings come out ascending.
    const stagedOf = new Map(rows.map((r) => [r.memory_id, r]));
    const docnums: number[] = [];
    const ids: string[] = [];
    const places: DocumentPlace[] = [];
    const numbered: StagedMemory[] = [];
    for (const m of memories) {
      const row = stagedOf.get(m.id);
      if (!row) continue;
      const docnum = next++;
      docnums.push(docnum);
      ids.push(m.id);
      places.push(m);
      numbered.push({ docnum, docLen: row.doc_len, tfs: row.tfs });
    }
    await query(
      tx,
      sql`insert into lexical_docs (org_id, docnum, memory_id, namespace_id, user_id, agent_id, run_id)
        select ${orgId}, d, m, ns, u, a, r
          from unnest(${docnums}::int[], ${ids}::uuid[], ${places.map((p) => p.namespace_id)}::uuid[],
            ${places.map((p) => p.user_id)}::text[],
                      ${places.map((p) => p.agent_id)}::text[], ${places.map((p) => p.run_id)}::text[]) as u(d, m, ns, u, a, r)`,
    );
    await query(tx, sql`update lexical_state set next_docnum = ${next} where org_id = ${orgId}`);
    const fresh = new Map<string, StoredBlock>();
    for (const [term, postings] of postingsByTerm(numbered)) fresh.set(term, encodeBlock(postings));
    await appendBlocks(tx, orgId, fresh);
    return docnums.length;
  });
}

// The next document number once the org's documents are renumbered, when the fold's would pass DOCNUM_LIMIT. A fold
// that cannot renumber now (an edit holds a document) fails, and its activity is retried.
async function renumberBeforeFold(tx: EntityManager, orgId: string, folding: number): Promise<number> {
  const renumbered = await renumberDocuments(tx, orgId);
  if (!renumbered) throw new Error(`org ${orgId}: its documents must be renumbered before folding, and an edit holds one`);
  if (renumbered.next + folding > DOCNUM_LIMIT) throw new Error(`org ${orgId} holds more documents than the lexical index can number`);
  return renumbered.next;
}

// Writes each term's new block, merged with the small blocks before it that the merge rule takes.
async function appendBlocks(tx: EntityManager, orgId: string, fresh: Map<string, StoredBlock>): Promise<void> {
  const terms = [...fresh.keys()];
  // Each term's blocks looked up by the primary key (OFFSET 0 keeps the planner from turning the lookups into
  // a hash join over all of the org's blocks, which it did: that costs in proportion to the org, not the fold).
  const small = await query(
    tx,
    sql<{
      term: string;
      first_docnum: number;
      docs: number;
    }>`select u.t as term, b.first_docnum, b.docs from unnest(${terms}::text[]) as u(t)
      cross join lateral (select first_docnum, docs from lexical_blocks
                           where org_id = ${orgId} and term = u.t and docs < ${BLOCK_FULL} order by first_docnum offset 0) b`,
  );
  const smallOf = new Map<string, { first: number; docs: number }[]>();
  for (const s of small) {
    let list = smallOf.get(s.term);
    if (!list) smallOf.set(s.term, (list = []));
    list.push({ first: s.first_docnum, docs: s.docs });
  }
  const taken: BlockKey[] = [];
  const takenOf = new Map<string, number[]>();
  for (const [term, block] of fresh) {
    const before = smallOf.get(term) ?? [];
    let size = block.docs;
    const firsts: number[] = [];
    while (before.length > 0 && before.at(-1)!.docs <= MERGE_RATIO * size) {
      const prev = before.pop()!;
      size += prev.docs;
      firsts.unshift(prev.first);
      taken.push({ term, first: prev.first });
    }
    if (firsts.length > 0) takenOf.set(term, firsts);
  }
  const loaded = new Map<string, StoredBlock>();
  for (const g of await deleteBlocks(tx, orgId, taken)) loaded.set(`${g.first_docnum}\u0000${g.term}`, g);
  await writeBlocks(
    tx,
    orgId,
    [...fresh].map(([term, block]) => {
      const firsts = takenOf.get(term) ?? [];
      if (firsts.length === 0) return { term, first: decodeBlock(block).docnums[0]!, block };
      return { term, first: firsts[0]!, block: mergeBlocks([...firsts.map((f) => loaded.get(`${f}\u0000${term}`)!), block]) };
    }),
  );
}

interface BlockKey {
  term: string;
  first: number;
}

async function deleteBlocks(tx: EntityManager, orgId: string, keys: BlockKey[]) {
  if (keys.length === 0) return [];
  // By ctid, found key by key (see appendBlocks on OFFSET 0); the org's state lock keeps every block in place.
  return query(
    tx,
    sql<{ term: string; first_docnum: number; docs: number; wide: boolean; data: Buffer }>`delete from lexical_blocks
      where ctid = any(array(select b.ctid from unnest(${keys.map((k) => k.term)}::text[], ${keys.map((k) => k.first)}::int[]) as u(t, f)
                             cross join lateral (select ctid from lexical_blocks
                             where org_id = ${orgId} and term = u.t and first_docnum = u.f offset 0) b))
      returning term, first_docnum, docs, wide, data`,
  );
}

// Inserts blocks. A block may take the key of one deleted earlier in the same transaction (a fold's merge, a rewrite).
// Their bytes travel as one binary parameter cut by offsets: a bytea[] would be sent as text, every byte in hex.
async function writeBlocks(tx: EntityManager, orgId: string, blocks: (BlockKey & { block: StoredBlock })[]): Promise<void> {
  if (blocks.length === 0) return;
  const offsets: number[] = [];
  let at = 0;
  for (const b of blocks) {
    offsets.push(at);
    at += b.block.data.length;
  }
  const bytes = Buffer.concat(
    blocks.map((b) => b.block.data),
    at,
  );
  await query(
    tx,
    sql`insert into lexical_blocks (org_id, term, first_docnum, docs, wide, data)
      select ${orgId}, t, f, d, w, substring(${bytes}::bytea from o + 1 for l)
        from unnest(${blocks.map((b) => b.term)}::text[], ${blocks.map((b) => b.first)}::int[], ${blocks.map((b) => b.block.docs)}::int[],
          ${blocks.map((b) => b.block.wide)}::bool[], ${offsets}::int[], ${blocks.map((b) => b.block.data.length)}::int[])
          as u(t, f, d, w, o, l)`,
  );
}

// At worker start: every org with postings not folded yet gets its curator signalled, which folds them (a new
// deployment, whose orgs' postings are all staged, or an org whose curator ended before folding).
export async function scheduleFolds(em: EntityManager): Promise<number> {
  const rows = await query(
    em,
    sql<{ id: string }>`select o.id from orgs o where exists (select 1 from lexical_staged s where s.org_id = o.id)`,
  );
  if (rows.length === 0) return 0;
  await enqueueJobs(
    em,
    rows.map(({ id }) => curateJob(id, [])),
  );
  return rows.length;
}

// Tombstones an org may gather before its blocks are rewritten without them: each search reads them all.
const TOMBSTONES_MIN = 1_000;
const TOMBSTONES_SHARE = 0.05;
// Numbers are never reused (each content edit takes a new one), so an org's next document number runs ahead of its
// live memories; once it is more than RENUMBER_RATIO times them (and past the scoring buffers' first size, below
// which renumbering gains nothing), compaction renumbers the documents densely instead.
export const RENUMBER_RATIO = 2;
export const RENUMBER_FLOOR = 1 << 16;
const COMPACT_PAGE = 500;

// Rewrites the org's blocks without its tombstoned documents once there are more than max(TOMBSTONES_MIN, 5% of
// its documents), or whenever `force`, and renumbers its documents instead when their numbers have run ahead
// (RENUMBER_RATIO); returns how many tombstones went. One transaction: a search sees the blocks and tombstones
// either before or after.
export async function compactPostings(em: EntityManager, orgId: string, force = false): Promise<number> {
  return em.transactional(async (tx) => {
    const next = await lockState(tx, orgId);
    const { live } = (await queryOne(tx, sql<{ live: number }>`select ${counterValue(orgId, orgId, ORG_COUNTERS.live)}::float8 as live`))!;
    if (next > RENUMBER_RATIO * Math.max(live, RENUMBER_FLOOR)) return (await renumberDocuments(tx, orgId))?.tombstones ?? 0;
    const tombstones = (await query(tx, sql<{ docnum: number }>`select docnum from lexical_tombstones where org_id = ${orgId}`)).map(
      (t) => t.docnum,
    );
    if (tombstones.length === 0 || (!force && tombstones.length <= Math.max(TOMBSTONES_MIN, TOMBSTONES_SHARE * next))) return 0;
    const dead = new Uint8Array(next);
    for (const d of tombstones) dead[d] = 1;
    await rewriteBlocks(tx, orgId, (d) => (dead[d] === 1 ? -1 : d));
    await query(tx, sql`delete from lexical_tombstones where org_id = ${orgId} and docnum = any(${tombstones}::int[])`);
    return tombstones.length;
  });
}

// Numbers the org's live documents 0, 1, 2, ... in their order, in the caller's transaction, which holds the org's
// state locked: every block keeps its postings ascending (tombstoned ones dropped), lexical_docs and next_docnum
// follow, and the numbering count goes up (lexical.ts checks it). The documents' rows are locked first, so an edit
// that unindexes one waits and then tombstones its new number; when an edit holds one already, nothing is done and
// null is returned (waiting could deadlock with an edit of several memories). Returns the next number and the
// tombstones dropped.
export async function renumberDocuments(tx: EntityManager, orgId: string): Promise<{ next: number; tombstones: number } | null> {
  await query(tx, sql`savepoint renumbering`);
  let docs: { docnum: number }[];
  try {
    docs = await query(
      tx,
      sql<{ docnum: number }>`select docnum from lexical_docs where org_id = ${orgId} order by docnum for update nowait`,
    );
  } catch (err) {
    if ((err as { code?: unknown }).code !== LOCK_NOT_AVAILABLE) throw err;
    await query(tx, sql`rollback to savepoint renumbering`);
    return null;
  }
  await query(tx, sql`release savepoint renumbering`);
  const live = Int32Array.from(docs, (d) => d.docnum);
  await rewriteBlocks(tx, orgId, rankIn(live));
  const moved = Array.from(live.keys()).filter((i) => live[i] !== i);
  await query(
    tx,
    sql`update lexical_docs d set docnum = u.new from unnest(${moved.map((i) => live[i]!)}::int[], ${moved}::int[]) as u(old, new)
         where d.org_id = ${orgId} and d.docnum = u.old`,
  );
  const { dropped } = (await queryOne(
    tx,
    sql<{
      dropped: number;
    }>`with gone as (delete from lexical_tombstones where org_id = ${orgId} returning 1) select count(*)::int as dropped from gone`,
  ))!;
  await query(tx, sql`update lexical_state set next_docnum = ${live.length}, numbering = numbering + 1 where org_id = ${orgId}`);
  return { next: live.length, tombstones: dropped };
}

const LOCK_NOT_AVAILABLE = '55P03';

// A document's place in `live` (ascending), or -1 when it is not there. Postings come ascending within a block, so
// each search starts where the last one ended unless the number went down (the next block).
function rankIn(live: Int32Array): (docnum: number) => number {
  let from = 0;
  let last = -1;
  return (docnum) => {
    if (docnum < last) from = 0;
    last = docnum;
    let lo = from;
    let hi = live.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (live[mid]! < docnum) lo = mid + 1;
      else hi = mid;
    }
    from = lo;
    return lo < live.length && live[lo] === docnum ? lo : -1;
  };
}

// Rewrites every block of the org that `renumber` changes (a new number for each posting, -1 to drop it), page by
// page. Numbers only go down and keep their order, so a rewritten block's key is below every block not read yet.
async function rewriteBlocks(tx: EntityManager, orgId: string, renumber: (docnum: number) => number): Promise<void> {
  let after = { term: '', first: -1 };
  for (;;) {
    const page = await query(
      tx,
      sql<{
        term: string;
        first_docnum: number;
        docs: number;
        wide: boolean;
        data: Buffer;
      }>`select term, first_docnum, docs, wide, data from lexical_blocks
        where org_id = ${orgId} and (term, first_docnum) > (${after.term}, ${after.first})
        order by term, first_docnum limit ${COMPACT_PAGE}`,
    );
    if (page.length === 0) break;
    after = { term: page.at(-1)!.term, first: page.at(-1)!.first_docnum };
    const changed = page
      .map((b) => ({ term: b.term, first: b.first_docnum, was: b, block: mergeBlocks([b], renumber) }))
      .filter((b) => b.block.docs < b.was.docs || !b.block.data.equals(b.was.data));
    await deleteBlocks(tx, orgId, changed);
    await writeBlocks(
      tx,
      orgId,
      changed.filter((b) => b.block.docs > 0).map((b) => ({ term: b.term, first: decodeBlock(b.block).docnums[0]!, block: b.block })),
    );
  }
}
