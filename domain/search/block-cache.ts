import { LRUCache } from 'lru-cache';
import type { IndexBlock } from './scoring.ts';

// Decoded postings blocks kept between searches in this process. The blocks of a few common terms make up most
// of what searches read, and sending them again each time (as hex text, twice their size) and decoding them is
// most of a search's reading. A block is known by its key and by the row version PostgreSQL gave it (its
// xmin): a fold's merge or a compaction writes the block anew, under a new version, so the search statement
// sends a block's bytes only when the cache holds no copy of that very version (lexical.ts). The xmin column
// reads the raw id of the writing transaction, which freezing leaves as it is.
// Terms are kept and evicted whole, least recently used first.

// The size a process keeps unless LEXICAL_CACHE_MB says otherwise. The cache grows only with what searches read, so a
// process holds that much only when its orgs are large.
export const DEFAULT_BLOCK_CACHE_MB = 256;

export interface CachedBlock extends IndexBlock {
  first: number;
  version: string;
}

// What a cached block costs beyond its columns: the objects and typed-array headers that hold it, and its
// peaks (a few pairs).
const BLOCK_OVERHEAD = 384;
const sizeOf = (blocks: CachedBlock[]): number =>
  blocks.reduce(
    (sum, b) => sum + BLOCK_OVERHEAD + b.postings.docnums.byteLength + b.postings.lens.byteLength + b.postings.tfs.byteLength,
    0,
  );

export class BlockCache {
  // Keyed by org and term; none at size 0.
  #terms: LRUCache<string, CachedBlock[]> | null;
  // Blocks served from the cache and blocks sent by the database, since the process started.
  hits = 0;
  misses = 0;

  constructor(limitBytes: number) {
    this.#terms = termsUpTo(limitBytes);
  }

  get bytes(): number {
    return this.#terms?.calculatedSize ?? 0;
  }

  // A new size, empty: the process sets it once, before its first search.
  resize(limitBytes: number): void {
    this.#terms = termsUpTo(limitBytes);
  }

  get(orgId: string, term: string): CachedBlock[] {
    return this.#terms?.get(`${orgId}\u0000${term}`) ?? [];
  }

  // The term's blocks as the latest search read them, replacing what was kept (a term larger than the whole cache
  // is not kept).
  set(orgId: string, term: string, blocks: CachedBlock[]): void {
    const key = `${orgId}\u0000${term}`;
    if (blocks.length === 0) this.#terms?.delete(key);
    else this.#terms?.set(key, blocks);
  }
}

const termsUpTo = (limitBytes: number): LRUCache<string, CachedBlock[]> | null =>
  limitBytes > 0 ? new LRUCache<string, CachedBlock[]>({ maxSize: limitBytes, sizeCalculation: sizeOf }) : null;
