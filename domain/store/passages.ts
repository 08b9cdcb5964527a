// A memory's vector is made from its text's first 512 tokens (the model's limit: about 2,000 characters of
// English), so a question about the middle of a long memory (a document, a meeting's notes) would not find it by
// meaning. A long memory is therefore also embedded in passages: windows of about PASSAGE_CHARS characters that
// overlap by about PASSAGE_OVERLAP, cut where a paragraph, a line, a sentence or at least a word ends, and starting
// where a line, a sentence or a word starts (so a passage reads well as a hit's excerpt). Search by
// meaning scores a memory by the best of its vectors (domain/search/semantic.ts). Characters stand in for tokens so
// that the split is the same for every model: a window is about 200 tokens of English.

// Texts up to this long are embedded whole, as before, and get no passages: their own vector covers them (512
// tokens are about 2,000 characters of English or more).
export const LONG_TEXT_CHARS = 2000;
export const isLong = (text: string): boolean => text.length > LONG_TEXT_CHARS;
export const PASSAGE_CHARS = 900;
export const PASSAGE_OVERLAP = 150;
// A memory is searched by meaning in at most this many passages (about 86,000 characters: a memory may hold
// 262,144 bytes); the rest of a longer one is found lexically. Each passage costs the worker as much CPU as a
// memory of its own, so one huge memory must not hold the worker up for long.
export const MAX_PASSAGES = 128;
// A passage's cosine similarity counts this much less than the memory's own vector's. A long memory has many
// chances to come near a query, a short one a single chance: without the handicap, long texts crowded out short
// ones that answer as well; with it, short memories rank as before and long ones keep most of what passages gain.
export const PASSAGE_HANDICAP = 0.02;

// A window never ends before this share of PASSAGE_CHARS when no better break is found nearer its end.
const MIN_SHARE = 0.6;

// A window of a text: text.slice(start, end), without the whitespace at either end.
export interface Passage {
  start: number;
  end: number;
  text: string;
}

// The windows of a long text, in order; none for a text of at most LONG_TEXT_CHARS. Passage i + 1 of a memory's
// vectors is the i-th of them.
export function passagesOf(text: string): Passage[] {
  if (!isLong(text)) return [];
  const passages: Passage[] = [];
  let start = 0;
  while (start < text.length && passages.length < MAX_PASSAGES) {
    const end =
      start + PASSAGE_CHARS >= text.length
        ? text.length
        : breakBefore(text, start + Math.floor(PASSAGE_CHARS * MIN_SHARE), start + PASSAGE_CHARS);
    const window = text.slice(start, end);
    const passage = window.trim();
    if (passage.length > 0) {
      const from = start + (window.length - window.trimStart().length);
      passages.push({ start: from, end: from + passage.length, text: passage });
    }
    if (end >= text.length) break;
    start = Math.max(start + 1, nextStart(text, end - PASSAGE_OVERLAP, end));
  }
  return passages;
}

// Where a window in [from, to] best ends: after the last paragraph break, line break, sentence end or space in the
// range, in that order of preference; at `to` when there is none (a text without spaces).
function breakBefore(text: string, from: number, to: number): number {
  const range = text.slice(from, to);
  for (const mark of [/\n\s*\n/g, /\n/g, /[.!?]["')\]]?\s/g, /\s/g]) {
    let last = -1;
    for (const m of range.matchAll(mark)) last = m.index + m[0].length;
    if (last > 0) return from + last;
  }
  return to;
}

// Where the next window starts, in [from, to): the first line's or sentence's start there, else the first word's
// (a window starts on a word, not inside one), else `from`.
function nextStart(text: string, from: number, to: number): number {
  const range = text.slice(from, to);
  for (const mark of [/\n\s*(?=\S)/, /[.!?]["')\]]?\s+(?=\S)/, /\s(?=\S)/]) {
    const m = mark.exec(range);
    if (m) return from + m.index + m[0].length;
  }
  return from;
}
