// A fold's staged memories turned into each term's postings (fold.ts). The memories come in document order, so each
// term's postings come out ascending. Their {term: tf} is read from jsonb's text form without building an object a
// memory: in a fold of thousands of memories, those objects and the arrays a term were most of the worker's garbage.

export interface StagedMemory {
  docnum: number;
  docLen: number;
  // The staged row's tfs as PostgreSQL prints jsonb: {"term": 2, "other": 1}.
  tfs: string;
}

export interface TermPostings {
  docnums: Int32Array;
  lens: Uint32Array;
  tfs: Uint32Array;
}

export function postingsByTerm(memories: readonly StagedMemory[]): Map<string, TermPostings> {
  const termIds = new Map<string, number>();
  const terms: string[] = [];
  // Every posting once, in document order: its term, its memory and its tf. A posting takes at least six characters
  // of the text ("x": 1), so that many bound the count.
  const capacity = memories.reduce((sum, m) => sum + Math.ceil(m.tfs.length / 6), 0);
  const postingTerm = new Int32Array(capacity);
  const postingMemory = new Int32Array(capacity);
  const postingTf = new Uint32Array(capacity);
  let count = 0;
  memories.forEach((memory, at) =>
    eachTerm(memory.tfs, (term, tf) => {
      let id = termIds.get(term);
      if (id === undefined) {
        id = terms.length;
        termIds.set(term, id);
        terms.push(term);
      }
      postingTerm[count] = id;
      postingMemory[count] = at;
      postingTf[count] = tf;
      count += 1;
    }),
  );
  // A counting sort by term, stable, so each term's postings keep the memories' order.
  const starts = new Int32Array(terms.length + 1);
  for (let i = 0; i < count; i++) starts[postingTerm[i]! + 1]! += 1;
  for (let t = 0; t < terms.length; t++) starts[t + 1]! += starts[t]!;
  const docnums = new Int32Array(count);
  const lens = new Uint32Array(count);
  const tfs = new Uint32Array(count);
  const filled = starts.slice(0, terms.length);
  for (let i = 0; i < count; i++) {
    const memory = memories[postingMemory[i]!]!;
    const at = filled[postingTerm[i]!]!++;
    docnums[at] = memory.docnum;
    lens[at] = memory.docLen;
    tfs[at] = postingTf[i]!;
  }
  const byTerm = new Map<string, TermPostings>();
  terms.forEach((term, t) => {
    const [from, to] = [starts[t]!, starts[t + 1]!];
    byTerm.set(term, { docnums: docnums.subarray(from, to), lens: lens.subarray(from, to), tfs: tfs.subarray(from, to) });
  });
  return byTerm;
}

// Calls `each` for every term of a jsonb text {"term": tf, ...}. Analyzed terms hold letters, marks and digits only,
// so jsonb prints them unescaped; any text not in that plain form is read by JSON.parse instead.
function eachTerm(text: string, each: (term: string, tf: number) => void): void {
  const plain = readPlain(text);
  if (plain) {
    for (let i = 0; i < plain.length; i += 2) each(plain[i] as string, plain[i + 1] as number);
    return;
  }
  for (const [term, tf] of Object.entries(JSON.parse(text) as Record<string, number>)) each(term, tf);
}

// The [term, tf, term, tf, ...] of a plain jsonb text, or null when the text is not plain.
function readPlain(text: string): (string | number)[] | null {
  if (text.includes('\\')) return null;
  const out: (string | number)[] = [];
  let at = text.indexOf('"');
  while (at >= 0) {
    const close = text.indexOf('"', at + 1);
    if (close < 0 || text.charCodeAt(close + 1) !== COLON || text.charCodeAt(close + 2) !== SPACE) return null;
    let i = close + 3;
    let tf = 0;
    for (let c = text.charCodeAt(i); c >= ZERO && c <= NINE; c = text.charCodeAt(++i)) tf = tf * 10 + (c - ZERO);
    if (i === close + 3) return null;
    out.push(text.slice(at + 1, close), tf);
    at = text.indexOf('"', i);
  }
  return out;
}

const [COLON, SPACE, ZERO, NINE] = [':', ' ', '0', '9'].map((c) => c.charCodeAt(0)) as [number, number, number, number];
