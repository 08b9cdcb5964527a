import { randomUUID } from 'node:crypto';
import type { EntityManager } from '@mikro-orm/postgresql';
import { analyze, termFrequencies } from '../../domain/store/analyzer.ts';
import { queryTermCounts } from '../../domain/search/bm25.ts';
import { tfsJson } from '../../domain/store/postings.ts';
import { query, sql } from '../../domain/sql.ts';

// `count` of the generator's memories indexed in memory, for the in-process studies: per term, memory numbers
// (in saving order, as uuidv7 ids sort) and tfs; per memory, its analyzed length.
export function agentPostings(memory: () => string, count: number) {
  const postings = new Map<string, { docs: number[]; tfs: number[] }>();
  const lengths = new Uint16Array(count);
  let total = 0;
  for (let d = 0; d < count; d++) {
    const terms = analyze(memory());
    lengths[d] = terms.length;
    total += terms.length;
    for (const [term, tf] of queryTermCounts(terms)) {
      let list = postings.get(term);
      if (!list) postings.set(term, (list = { docs: [], tfs: [] }));
      list.docs.push(d);
      list.tfs.push(tf);
    }
  }
  return { postings, lengths, total };
}

// Memories written straight into an org with their postings staged, as saves leave them (bench/renumbering.ts,
// bench/namespaces-at-scale.ts): `count` of the generator's memories, memory i in the project `namespaceOf(i)`, in
// statements of 5,000. Returns each memory's id and analyzed length, in order.
export async function writeStagedMemories(
  em: EntityManager,
  org: string,
  memory: () => string,
  count: number,
  namespaceOf: (i: number) => string,
): Promise<{ ids: string[]; lens: number[] }> {
  const written = { ids: [] as string[], lens: [] as number[] };
  for (let at = 0; at < count; at += 5_000) {
    const [ids, namespaces, contents, lens, tfs]: [string[], string[], string[], number[], string[]] = [[], [], [], [], []];
    for (let i = at; i < Math.min(count, at + 5_000); i++) {
      const content = memory();
      const analyzed = termFrequencies(content);
      ids.push(randomUUID());
      namespaces.push(namespaceOf(i));
      contents.push(content);
      lens.push(analyzed.length);
      tfs.push(tfsJson(analyzed.terms));
    }
    await query(
      em.fork(),
      sql`with m as (
         insert into memories (id, org_id, namespace_id, content, stored_bytes, doc_len, tags, source, metadata, created_at, updated_at)
         select id, ${org}, ns, content, octet_length(content), len, '{}', 'api', '{}', now(), now()
           from unnest(${ids}::uuid[], ${namespaces}::uuid[], ${contents}::text[], ${lens}::int[]) as x(id, ns, content, len))
       insert into lexical_staged (org_id, memory_id, doc_len, tfs)
       select ${org}, id, len, tfs from unnest(${ids}::uuid[], ${lens}::int[], ${tfs}::jsonb[]) as y(id, len, tfs)`,
    );
    written.ids.push(...ids);
    written.lens.push(...lens);
  }
  return written;
}
