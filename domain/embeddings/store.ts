import type { EntityManager } from '@mikro-orm/postgresql';
import { ORG_COUNTERS } from '../store/counters.ts';
import { query, queryOne, sql, toDate } from '../sql.ts';
import type { RawBuilder } from 'kysely';
import { AppError } from '../errors.ts';
import type { Embedder } from '../store/embedder.ts';
import { ownIndexServes } from '../store/vector-indexes.ts';
import { isLong, LONG_TEXT_CHARS, passagesOf } from '../store/passages.ts';
import { chunksAfter, contextsOf, withContext, type ChunkContext } from '../store/thread-context.ts';
import { parseVector, vectorLiteral } from '../store/vectors.ts';

// The memories' vectors in memory_embeddings (migrations/0011_embeddings.ts). A vector is keyed by the md5
// of the text it was made from, computed by PostgreSQL, so a row whose text changed since is never taken
// for current. A memory's text is passage 0; a long memory also has passages 1, 2, ... (passages.ts).

// Texts given to the model at once, whose rows are then written while it takes the next chunk.
const EMBED_CHUNK = 64;

interface Subject {
  id: string;
  content: string;
  hash: string;
  // A chunk of a thread (metadata.parent_ref), searched with its context (thread-context.ts).
  thread: boolean;
}

export interface EmbedOutcome {
  // Vectors computed by the model, copied from identical text already embedded, and memories already current.
  embedded: number;
  reused: number;
  current: number;
  // Memories whose text the provider refused (embedding_input_refused): they stay without a vector, found
  // lexically, until their content changes.
  refused: number;
}

export const noOutcome = (): EmbedOutcome => ({ embedded: 0, reused: 0, current: 0, refused: 0 });

// Gives each memory named a vector of its current text, unless it has one. Deleted and superseded memories
// are skipped. Idempotent: running it twice embeds nothing the second time.
export async function embedMemories(em: EntityManager, embedder: Embedder, orgId: string, ids: string[]): Promise<EmbedOutcome> {
  const rows = await query(
    em,
    sql<Subject>`select id, content, md5(content) as hash, metadata ? 'parent_ref' as thread from memories
      where org_id = ${orgId} and id = any(${ids}::uuid[]) and superseded_by is null`,
  );
  return embedSubjects(em, embedder, orgId, rows);
}

// A backfill page examines at most this many memories, in creation order, and embeds those without a current
// vector. After a burst the backlog sits at the end of the org, which a walk reaches in a page per
// BACKFILL_EXAMINE memories already current, not one per BACKFILL_PAGE.
const BACKFILL_EXAMINE = 4096;

const cursorOf = (row: { created_at: string | Date; id: string }): string => `${toDate(row.created_at).toISOString()}|${row.id}`;

// The first `size` of the `live` memories up to `end` (in creation order) without a current vector of `model` (or,
// for a long one, without its passages: one saved before passages were made). Each memory's vectors are looked up
// by their key (OFFSET 0, as in memoryPasses): as an anti-join, an org the statistics do not know yet (estimated at
// one row) read all its vectors again for each memory of the page. PostgreSQL counts characters where passagesOf
// counts UTF-16 units, so a text it finds long always has passages.
export const pageWithoutVectors = (
  live: RawBuilder<unknown>,
  orgId: string,
  model: string,
  end: { created_at: string | Date; id: string },
  size: number,
) =>
  sql<
    Subject & { created_at: string | Date; n: number }
  >`select x.id, x.content, md5(x.content) as hash, x.thread, x.created_at, x.n::int from (
      select id, content, metadata ? 'parent_ref' as thread, created_at, row_number() over (order by created_at, id) as n from memories
       where ${live} and (created_at, id) <= (${toDate(end.created_at).toISOString()}::timestamptz, ${end.id}::uuid)) x
     where not exists (select 1 from memory_embeddings e
                        where e.org_id = ${orgId} and e.memory_id = x.id and e.passage = 0 and e.model = ${model}
                          and e.content_hash = md5(x.content) offset 0)
        or (length(x.content) > ${LONG_TEXT_CHARS} and not exists (select 1 from memory_embeddings e
                        where e.org_id = ${orgId} and e.memory_id = x.id and e.passage > 0 and e.model = ${model}
                          and e.content_hash = md5(x.content) offset 0))
     order by x.created_at, x.id limit ${size}`;

// One page of a backfill: of the next `examine` memories after `cursor` in creation order, the first `size` that
// lack a current vector get one. Returns the cursor to go on from (the last memory this page embedded, or the last
// it examined), or null at the end: a backfill walks an org of any size in bounded steps.
export async function embedPage(
  em: EntityManager,
  embedder: Embedder,
  orgId: string,
  cursor: string | null,
  size: number,
  examine = BACKFILL_EXAMINE,
): Promise<{ outcome: EmbedOutcome; next: string | null }> {
  const [afterAt, afterId] = cursor ? cursor.split('|') : [null, null];
  const live = sql`org_id = ${orgId} and superseded_by is null
      ${afterAt ? sql`and (created_at, id) > (${afterAt}::timestamptz, ${afterId}::uuid)` : sql``}`;
  // The last of the memories this page examines, and how many they are.
  const end = await queryOne(
    em,
    sql<{ created_at: string | Date; id: string; n: number }>`select created_at, id, n::int from (
        select created_at, id, row_number() over (order by created_at, id) as n from memories where ${live} order by created_at, id
        limit ${examine}) x
      order by n desc limit 1`,
  );
  if (!end) return { outcome: noOutcome(), next: null };
  const rows = await query(em, pageWithoutVectors(live, orgId, embedder.model, end, size));
  const outcome = await embedSubjects(em, embedder, orgId, rows);
  // A full page stops at its last memory to embed; the memories examined before it that it left alone are current.
  const last = rows.length === size ? rows.at(-1)! : end;
  outcome.current += last.n - rows.length;
  return { outcome, next: last === end && end.n < examine ? null : cursorOf(last) };
}

// Writes vectors (pgvector's text form) for memories that still hold the text they were computed from, each into
// the one HNSW index that serves its org (domain/store/vector-indexes.ts); `passage` is 0 (the default) for the
// memory's text, and `text`, for a chunk of a thread, is its text's own vector, `vector` then being the one mixed
// with its context. Each
// memory is probed by its key (OFFSET 0, as in memoryPasses): joined instead, an org the statistics do not know
// yet (estimated at one row) got a hash of all its memories, with an md5 of each, for every batch written.
export const vectorsWrite = (
  orgId: string,
  model: string,
  rows: { id: string; hash: string; vector: string; text?: string | undefined; passage?: number }[],
) =>
  sql`insert into memory_embeddings (memory_id, org_id, model, content_hash, embedding, text_embedding, own_index, passage)
    select u.id, ${orgId}, ${model}, u.h, u.v::vector, u.t::vector, ${ownIndexServes(orgId)}, u.p
      from unnest(${rows.map((r) => r.id)}::uuid[], ${rows.map((r) => r.hash)}::text[], ${rows.map((r) => r.vector)}::text[],
        ${rows.map((r) => r.text ?? null)}::text[],
                  ${rows.map((r) => r.passage ?? 0)}::smallint[]) as u(id, h, v, t, p)
     where exists (select 1 from memories m where m.org_id = ${orgId} and m.id = u.id and md5(m.content) = u.h offset 0)
    on conflict (org_id, memory_id, passage) do update
    set model = excluded.model, content_hash = excluded.content_hash, embedding = excluded.embedding,
      text_embedding = excluded.text_embedding, embedded_at = now(), own_index = excluded.own_index`;

// A text to embed: a memory's text (passage 0) or one of its passages, by the hash of the memory's text.
interface Piece {
  hash: string;
  passage: number;
  text: string;
}
const pieceKey = (hash: string, passage: number): string => `${hash}/${passage}`;

async function embedSubjects(em: EntityManager, embedder: Embedder, orgId: string, rows: Subject[]): Promise<EmbedOutcome> {
  const outcome = noOutcome();
  if (rows.length === 0) return outcome;
  const model = embedder.model;
  const have = await query(
    em,
    sql<{ memory_id: string; content_hash: string; passages: boolean }>`select e.memory_id, e.content_hash,
        exists (select 1 from memory_embeddings p where p.org_id = e.org_id and p.memory_id = e.memory_id and p.passage > 0
                   and p.model = e.model and p.content_hash = e.content_hash) as passages
        from memory_embeddings e
      where e.org_id = ${orgId} and e.memory_id = any(${rows.map((r) => r.id)}::uuid[]) and e.passage = 0 and e.model = ${model}`,
  );
  const vectors = new Map(have.map((h) => [h.memory_id, h]));
  // Current: a vector of the memory's text, and its passages if it is long.
  const current = (r: Subject) => {
    const v = vectors.get(r.id);
    return v?.content_hash === r.hash && (v.passages || !isLong(r.content));
  };
  const todo = rows.filter((r) => !current(r));
  outcome.current = rows.length - todo.length;
  // Current memories named again: a chunk before them was deleted or edited, or they moved in or out of a thread.
  // One named again outside any thread gets back its text's vector, should it have left a thread.
  const renamed = rows.filter(current);
  const outside = renamed.filter((r) => !r.thread).map((r) => r.id);
  if (outside.length > 0) {
    await query(
      em,
      sql`update memory_embeddings set embedding = text_embedding, text_embedding = null
        where org_id = ${orgId} and memory_id = any(${outside}::uuid[]) and text_embedding is not null`,
    );
  }
  const renamedChunks = renamed.filter((r) => r.thread).map((r) => r.id);
  if (todo.length === 0) {
    await writeAround(em, orgId, model, await readContexts(em, orgId, model, [], renamedChunks), new Map(), []);
    return outcome;
  }
  // The thread chunks' contexts are read while the model runs: the chunks before and after them, and the vectors
  // of those not in this batch, are already in the database.
  const reading = readContexts(
    em,
    orgId,
    model,
    todo.filter((r) => r.thread).map((r) => r.id),
    renamedChunks,
  );
  // Should the model fail first, this read's failure is not worth an unhandled rejection.
  reading.catch(() => undefined);

  // Identical text gets the vectors it already has elsewhere in the org (or, for a long memory embedded before it
  // had passages, its own); the model runs once per new text or passage.
  const hashes = [...new Set(todo.map((r) => r.hash))];
  const known = await query(
    em,
    sql<{ content_hash: string; passage: number; embedding: string }>`select distinct on (content_hash, passage) content_hash, passage,
        coalesce(text_embedding, embedding)::text as embedding from memory_embeddings
      where org_id = ${orgId} and model = ${model} and content_hash = any(${hashes}::text[])`,
  );
  const vectorOf = new Map(known.map((k) => [pieceKey(k.content_hash, k.passage), k.embedding]));
  const textOf = new Map(todo.map((r) => [r.hash, r.content]));
  // Each text's pieces: the text itself, then its passages.
  const piecesOf = new Map(
    hashes.map((hash) => [
      hash,
      [textOf.get(hash)!, ...passagesOf(textOf.get(hash)!).map((p) => p.text)].map((text, passage): Piece => ({ hash, passage, text })),
    ]),
  );
  const fresh = [...piecesOf.values()].flat().filter((p) => !vectorOf.has(pieceKey(p.hash, p.passage)));
  // A memory is written once each of its pieces has a vector or was refused.
  const waiting = new Map<string, number>();
  for (const p of fresh) waiting.set(p.hash, (waiting.get(p.hash) ?? 0) + 1);
  const refused = new Set<string>();
  // The text vectors of the batch's thread chunks known so far, and the chunks written without part of their context.
  const texts: TextVectors = new Map();
  const partial: string[] = [];
  // Written only where the memory still has the text that was embedded; a later edit removes the row again
  // and signals the curator, so a race with an edit ends with the newer text's vector.
  // A refused passage is left out; a memory whose text is refused gets no vector at all.
  const write = async (hashesDone: Set<string>) => {
    const done = todo.filter((r) => hashesDone.has(r.hash) && !refused.has(pieceKey(r.hash, 0)));
    const textVector = (r: Subject) => vectorOf.get(pieceKey(r.hash, 0))!;
    for (const r of done) if (r.thread) texts.set(r.id, { hash: r.hash, text: textVector(r) });
    const plain = done.filter((r) => !r.thread).map((r) => ({ id: r.id, hash: r.hash, vector: textVector(r) }));
    const chunks = done.some((r) => r.thread)
      ? inContext(
          await reading,
          texts,
          done.filter((r) => r.thread).map((r) => r.id),
          partial,
        )
      : [];
    // A memory's passages go with its text's vector, never without it.
    const heads = new Set([...plain, ...chunks].map((r) => r.id));
    const parts = done
      .filter((r) => heads.has(r.id))
      .flatMap((r) =>
        piecesOf
          .get(r.hash)!
          .slice(1)
          .map((p) => ({ id: r.id, hash: r.hash, passage: p.passage, vector: vectorOf.get(pieceKey(r.hash, p.passage)) })),
      )
      .filter((p): p is { id: string; hash: string; passage: number; vector: string } => p.vector !== undefined);
    if (plain.length + chunks.length + parts.length > 0) await query(em, vectorsWrite(orgId, model, [...plain, ...chunks, ...parts]));
  };
  // Reused vectors are written at once. New texts go through the model a chunk at a time, and each chunk's rows
  // are written while the model takes the next: a backfill page's writes into the HNSW index do not leave the
  // model idle.
  let writing = write(new Set(hashes.filter((h) => !waiting.has(h))));
  for (let start = 0; start < fresh.length; start += EMBED_CHUNK) {
    const chunk = fresh.slice(start, start + EMBED_CHUNK);
    const [computed] = await Promise.all([
      embedRefusing(
        embedder,
        orgId,
        chunk.map((p) => p.text),
      ),
      writing,
    ]);
    const completed = new Set<string>();
    chunk.forEach((p, i) => {
      const key = pieceKey(p.hash, p.passage);
      if (computed[i]) vectorOf.set(key, vectorLiteral(computed[i]));
      else refused.add(key);
      waiting.set(p.hash, waiting.get(p.hash)! - 1);
      if (waiting.get(p.hash) === 0) completed.add(p.hash);
    });
    writing = write(completed);
  }
  await writing;
  await writeAround(em, orgId, model, await reading, texts, partial);
  const modelRan = new Set(fresh.map((p) => p.hash));
  outcome.embedded = [...modelRan].filter((h) => !refused.has(pieceKey(h, 0))).length;
  outcome.refused = todo.filter((r) => refused.has(pieceKey(r.hash, 0))).length;
  outcome.reused = todo.length - outcome.refused - outcome.embedded;
  return outcome;
}

// The contexts of thread chunks (thread-context.ts): of `chunks`, whose text vectors the caller is computing or
// reusing (so they are not read); of `renamed`, chunks named again that already had a current vector; and of the
// chunks after either, whose context they are.
async function readContexts(em: EntityManager, orgId: string, model: string, chunks: string[], renamed: string[], recheck = false) {
  const named = [...chunks, ...renamed];
  if (named.length === 0) return new Map<string, ChunkContext>();
  const after = recheck ? [] : await chunksAfter(em, orgId, named);
  return contextsOf(em, orgId, model, [...named, ...after], chunks);
}

// Text vectors of thread chunks by memory id, with the hash of the text they were made from.
type TextVectors = Map<string, { hash: string; text: string }>;

// The rows to write for the chunks `ids` of `contexts`, each mixed with its context; `texts` holds text vectors the
// caller has (the database's are in the contexts). A vector that would not change is left out; a chunk mixed without
// the vector of a chunk before it (not embedded yet) is added to `partial`.
function inContext(contexts: Map<string, ChunkContext>, texts: TextVectors, ids: string[], partial: string[]) {
  const rows: { id: string; hash: string; vector: string; text: string }[] = [];
  for (const id of ids) {
    const context = contexts.get(id);
    const fresh = texts.get(id);
    const own = fresh?.text ?? context?.own ?? null;
    // Without a current vector of its own text, the memory waits for its turn in the curator.
    if (!context || own === null) continue;
    const before = context.before.map((b) => (texts.get(b.id)?.hash === b.hash ? texts.get(b.id)!.text : b.vector));
    if (before.includes(null)) partial.push(id);
    const mixed = withContext(parseVector(own), before.filter((v) => v !== null).map(parseVector));
    if (!fresh && context.searched !== null && sameVector(parseVector(context.searched), mixed)) continue;
    rows.push({ id, hash: fresh?.hash ?? context.hash, vector: vectorLiteral(mixed), text: own });
  }
  return rows;
}

// Once a batch's own rows are written: the chunks after them and the chunks named again (of `contexts`), read again
// and mixed with the batch's text vectors (`texts`); then the chunks in `partial`, read again. Another activity of
// the curator may embed one of them meanwhile, having read this batch's chunks before they were written: each
// reads after it writes, so whichever writes last sees the other.
async function writeAround(
  em: EntityManager,
  orgId: string,
  model: string,
  contexts: Map<string, ChunkContext>,
  texts: TextVectors,
  partial: string[],
): Promise<void> {
  const aroundIds = [...contexts.keys()].filter((id) => !texts.has(id));
  const current = aroundIds.length > 0 ? await readContexts(em, orgId, model, [], aroundIds, true) : new Map<string, ChunkContext>();
  const around = inContext(current, texts, [...current.keys()], partial);
  if (around.length > 0) await query(em, vectorsWrite(orgId, model, around));
  if (partial.length === 0) return;
  const again = await readContexts(em, orgId, model, [], partial, true);
  const rows = inContext(again, new Map(), [...again.keys()], []);
  if (rows.length > 0) await query(em, vectorsWrite(orgId, model, rows));
}

// Equal as stored (single precision).
const sameVector = (a: Float32Array, b: Float32Array): boolean => a.length === b.length && a.every((x, i) => Math.abs(x - b[i]!) < 1e-6);

// The texts' vectors, null for each text the provider refuses: a refused batch is split in halves until the
// refused texts stand alone, so one bad text costs its batch a few more requests, not its vectors.
async function embedRefusing(embedder: Embedder, orgId: string, texts: string[]): Promise<(Float32Array | null)[]> {
  if (texts.length === 0) return [];
  try {
    return await embedder.embedDocuments(texts, orgId);
  } catch (err) {
    if (!(err instanceof AppError && err.error === 'embedding_input_refused')) throw err;
    if (texts.length === 1) return [null];
    const half = Math.ceil(texts.length / 2);
    return [...(await embedRefusing(embedder, orgId, texts.slice(0, half))), ...(await embedRefusing(embedder, orgId, texts.slice(half)))];
  }
}

// Memories of every org still waiting for a vector of this model (the sum of each org's `pending`), for the
// worker's metrics.
export async function embeddingBacklog(em: EntityManager, model: string): Promise<number> {
  const row = await queryOne(
    em,
    sql<{ backlog: string }>`select
        (select coalesce(sum(value), 0) from counters where name = ${ORG_COUNTERS.live})
        - (select count(*) from memory_embeddings e join memories m on m.org_id = e.org_id and m.id = e.memory_id
            where e.passage = 0 and e.model = ${model} and m.superseded_by is null) as backlog`,
  );
  return Math.max(0, Number(row!.backlog));
}
