// lexical: BM25 over the postings (the default); semantic: cosine similarity of embeddings; hybrid: both lists fused
// (search.ts).
export const SEARCH_MODES = ['lexical', 'semantic', 'hybrid'] as const;
export type SearchMode = (typeof SEARCH_MODES)[number];
