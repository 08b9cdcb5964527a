import { analyze } from '../../domain/store/analyzer.ts';
import { queryTermCounts } from '../../domain/search/bm25.ts';

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
