import { endianness } from 'node:os';

// One term's postings for a run of document numbers, as lexical_blocks stores them: three columns one after
// the other, document numbers ascending (int32), then each document's analyzed length, then the term's
// frequency in it. A narrow block (every length < 65,536 and every tf < 256: all but pathological memories)
// takes 7 bytes a posting, uint16 lengths and uint8 tfs; a wide one 12, uint32 both. The columns are read
// through typed arrays, in the machine's byte order, which is little-endian wherever Node runs.
if (endianness() !== 'LE') throw new Error('postings blocks are stored little-endian; this machine is big-endian');

export interface Postings {
  docnums: Int32Array;
  lens: Uint16Array | Uint32Array;
  tfs: Uint8Array | Uint32Array;
}

export interface StoredBlock {
  docs: number;
  wide: boolean;
  data: Buffer;
}

export function encodeBlock(p: { docnums: ArrayLike<number>; lens: ArrayLike<number>; tfs: ArrayLike<number> }): StoredBlock {
  const n = p.docnums.length;
  let wide = false;
  for (let i = 0; i < n && !wide; i++) wide = p.lens[i]! > 0xffff || p.tfs[i]! > 0xff;
  const bytes = new ArrayBuffer(n * (wide ? 12 : 7));
  new Int32Array(bytes, 0, n).set(p.docnums);
  if (wide) {
    new Uint32Array(bytes, 4 * n, n).set(p.lens);
    new Uint32Array(bytes, 8 * n, n).set(p.tfs);
  } else {
    new Uint16Array(bytes, 4 * n, n).set(p.lens);
    new Uint8Array(bytes, 6 * n, n).set(p.tfs);
  }
  return { docs: n, wide, data: Buffer.from(bytes) };
}

// Views over a stored block (copied first only when the driver's buffer is not 4-byte aligned).
export function decodeBlock(block: StoredBlock): Postings {
  const n = block.docs;
  const data = block.data.byteOffset % 4 === 0 ? block.data : Buffer.from(block.data);
  const { buffer, byteOffset } = data;
  const docnums = new Int32Array(buffer, byteOffset, n);
  return block.wide
    ? { docnums, lens: new Uint32Array(buffer, byteOffset + 4 * n, n), tfs: new Uint32Array(buffer, byteOffset + 8 * n, n) }
    : { docnums, lens: new Uint16Array(buffer, byteOffset + 4 * n, n), tfs: new Uint8Array(buffer, byteOffset + 6 * n, n) };
}

// Several blocks of one term, in document order, as one; `renumber` gives each posting's new document number (it
// must keep their order), or -1 to drop it (a tombstoned document).
export function mergeBlocks(blocks: StoredBlock[], renumber: (docnum: number) => number = (d) => d): StoredBlock {
  const parts = blocks.map(decodeBlock);
  const total = parts.reduce((sum, p) => sum + p.docnums.length, 0);
  const docnums = new Int32Array(total);
  const lens = new Uint32Array(total);
  const tfs = new Uint32Array(total);
  let n = 0;
  for (const p of parts) {
    for (let i = 0; i < p.docnums.length; i++) {
      const docnum = renumber(p.docnums[i]!);
      if (docnum < 0) continue;
      docnums[n] = docnum;
      lens[n] = p.lens[i]!;
      tfs[n] = p.tfs[i]!;
      n += 1;
    }
  }
  return encodeBlock({ docnums: docnums.subarray(0, n), lens: lens.subarray(0, n), tfs: tfs.subarray(0, n) });
}

// A block's best postings for bounding scores: for each tf it holds, the shortest document with that tf. BM25's
// term score rises with tf and falls with length, so whatever the org's average length, no posting of the block
// scores above the best of these pairs (scoring.ts prunes with it). Computed once per decoded block.
export interface Peaks {
  tfs: number[];
  lens: number[];
}

const shortestByTf = new Uint32Array(256);

export function peaksOf(p: Postings): Peaks {
  const n = p.docnums.length;
  const pairs: [number, number][] = [];
  if (p.tfs instanceof Uint8Array) {
    // A narrow block: tfs < 256, kept in a table by tf (no Map per posting: this runs over every posting).
    shortestByTf.fill(0xffffffff);
    const { tfs, lens } = p;
    for (let i = 0; i < n; i++) {
      const tf = tfs[i]!;
      if (lens[i]! < shortestByTf[tf]!) shortestByTf[tf] = lens[i]!;
    }
    for (let tf = 0; tf < 256; tf++) if (shortestByTf[tf] !== 0xffffffff) pairs.push([tf, shortestByTf[tf]!]);
  } else {
    const shortest = new Map<number, number>();
    for (let i = 0; i < n; i++) {
      const tf = p.tfs[i]!;
      const len = p.lens[i]!;
      if (len < (shortest.get(tf) ?? Infinity)) shortest.set(tf, len);
    }
    pairs.push(...shortest);
  }
  // Only pairs no higher tf beats on length can be the best.
  pairs.sort((a, b) => b[0] - a[0]);
  const peaks: Peaks = { tfs: [], lens: [] };
  let shortestAbove = Infinity;
  for (const [tf, len] of pairs) {
    if (len >= shortestAbove) continue;
    shortestAbove = len;
    peaks.tfs.push(tf);
    peaks.lens.push(len);
  }
  return peaks;
}
