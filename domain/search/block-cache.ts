import type { IndexBlock } from './scoring.ts';

// Decoded postings blocks kept between searches in this process. The blocks of a few common terms make up most
// of what searches read, and sending them again each time (as hex text, twice their size) and decoding them is
// most of a search's reading. A block is known by its key and by the row version PostgreSQL gave it (its
// xmin): a fold's merge or a compaction writes the block anew, under a new version, so the search statement
// sends a block's bytes only when the cache holds no copy of that very version (lexical.ts). The xmin column
// reads the raw id of the writing transaction, which freezing leaves as it is.
// Terms are kept and evicted whole, least recently used first.

// The size a process keeps unless LEXICAL_CACHE_MB says otherwise.
export const DEFAULT_BLOCK_CACHE_MB = 64;

export interface CachedBlock extends IndexBlock {
  first: number;
  version: string;
}

// What a cached block costs beyond its columns: the objects and typed-array headers that hold it, and its
// peaks (a few pairs).
const BLOCK_OVERHEAD = 384;
const sizeOf = (blocks: CachedBlock[]): number =>
  blocks.reduce((sum, b) => sum + BLOCK_OVERHEAD + b.postings.docnums.byteLength + b.postings.lens.byteLength + b.postings.tfs.byteLength, 0);

export class BlockCache {
  // Keyed by org and term; a Map iterates in insertion order, so re-inserting on use keeps it in LRU order.
  readonly #terms = new Map<string, { blocks: CachedBlock[]; bytes: number }>();
  #bytes = 0;
  #limit: number;
  // Blocks served from the cache and blocks sent by the database, since the process started.
  hits = 0;
  misses = 0;

  constructor(limitBytes: number) {
    this.#limit = limitBytes;
  }

  get bytes(): number {
    return this.#bytes;
  }

  resize(limitBytes: number): void {
    this.#limit = limitBytes;
    this.#evict();
  }

  get(orgId: string, term: string): CachedBlock[] {
    const key = `${orgId}\u0000${term}`;
    const entry = this.#terms.get(key);
    if (!entry) return [];
    this.#terms.delete(key);
    this.#terms.set(key, entry);
    return entry.blocks;
  }

  // The term's blocks as the latest search read them, replacing what was kept.
  set(orgId: string, term: string, blocks: CachedBlock[]): void {
    const key = `${orgId}\u0000${term}`;
    const old = this.#terms.get(key);
    if (old) {
      this.#bytes -= old.bytes;
      this.#terms.delete(key);
    }
    const bytes = sizeOf(blocks);
    if (blocks.length === 0 || bytes > this.#limit) return;
    this.#terms.set(key, { blocks, bytes });
    this.#bytes += bytes;
    this.#evict();
  }

  #evict(): void {
    for (const [key, entry] of this.#terms) {
      if (this.#bytes <= this.#limit) return;
      this.#terms.delete(key);
      this.#bytes -= entry.bytes;
    }
  }
}
