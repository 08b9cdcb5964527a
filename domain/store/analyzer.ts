import { stemmer } from 'stemmer';

// Stored postings are the output of this file, so any change to what it emits for some input must bump this
// and re-index: documents analyzed by an older version would otherwise never match queries analyzed by the new.
export const ANALYZER_VERSION = 1;

// Tokens longer than this (UTF-16 code units, before stemming) are dropped, not truncated: a truncated hash
// or base64 run would still be a unique, useless term. 40 is well above real English words (which rarely pass
// 25) and keeps a full git SHA-1 searchable, while SHA-256 digests and long unbroken base64 or JWT runs go.
export const MAX_TERM_LENGTH = 40;

// Lucene's EnglishAnalyzer default set, so our rankings are comparable with the published Lucene figures.
const STOP_WORDS: ReadonlySet<string> = new Set([
  'a',
  'an',
  'and',
  'are',
  'as',
  'at',
  'be',
  'but',
  'by',
  'for',
  'if',
  'in',
  'into',
  'is',
  'it',
  'no',
  'not',
  'of',
  'on',
  'or',
  'such',
  'that',
  'the',
  'their',
  'then',
  'there',
  'these',
  'they',
  'this',
  'to',
  'was',
  'will',
  'with',
]);

// Hybrid search also drops, from its query only, the words that make a sentence a question: agents ask in
// questions ("when did Caroline go to the support group?") while memories state facts, and in stored
// conversations these words mostly match other questions; dropping them raises the lexical and fused lists'
// recall on LoCoMo's conversations. The lexical mode keeps Lucene's set, so its rankings stay comparable with
// Lucene's figures.
export const QUESTION_STOP_WORDS: ReadonlySet<string> = new Set([
  ...STOP_WORDS,
  ...['what', 'when', 'where', 'who', 'whom', 'whose', 'why', 'how', 'which'],
  ...['do', 'does', 'did', 'has', 'have', 'had', 'would', 'could', 'can', 'should', 'were', 'been', 'being', 'am'],
]);

// One alternation, no nested quantifiers: linear time on any input.
// - Han and Hiragana are written without spaces, so each character is its own token (as in Lucene's
//   StandardTokenizer); otherwise a whole sentence would be one token, and over MAX_TERM_LENGTH at that.
// - Combining marks may continue a token: scripts such as Devanagari keep vowel signs as marks even after
//   NFKC, and lowercasing 'İ' yields 'i' + U+0307.
// - A trailing possessive 's is matched so it can be dropped (Lucene's EnglishPossessiveFilter); any other
//   apostrophe splits, so "don't" gives "don" and "t". U+02BC is a letter to Unicode but an apostrophe in
//   practice (some keyboards type it), so it is taken out of the letter classes.
const TOKEN =
  /[\p{sc=Han}\p{sc=Hiragana}]|[[\p{L}\p{N}]--[\p{sc=Han}\p{sc=Hiragana}\u02BC]][[\p{L}\p{M}\p{N}]--[\p{sc=Han}\p{sc=Hiragana}\u02BC]]*(?:['\u2019\u02BC]s(?![\p{L}\p{M}\p{N}]))?/gv;

const POSSESSIVE = /['\u2019\u02BC]s$/;

// Stems of the words seen lately, shared by every text the process analyzes: a store's vocabulary is mostly
// the same few thousand words, and the stemmer is the costliest step. Cleared when full, so it stays bounded.
const STEMS_KEPT = 50_000;
const stems = new Map<string, string>();
function stemOf(word: string): string {
  let stem = stems.get(word);
  if (stem === undefined) {
    if (stems.size >= STEMS_KEPT) stems.clear();
    stem = stemmer(word);
    stems.set(word, stem);
  }
  return stem;
}

function toTerm(token: string, stopWords: ReadonlySet<string>): string | null {
  const word = POSSESSIVE.test(token) ? token.slice(0, -2) : token;
  if (word.length > MAX_TERM_LENGTH || stopWords.has(word)) return null;
  return stemOf(word);
}

/** The terms of `text` in order: NFKC, lowercase, tokenize, drop possessives, overlong tokens and stop words, Porter-stem. */
export function analyze(text: string, stopWords: ReadonlySet<string> = STOP_WORDS): string[] {
  const out: string[] = [];
  // Memory text repeats its words, so each distinct token is turned into a term once.
  const seen = new Map<string, string | null>();
  for (const [token] of text.normalize('NFKC').toLowerCase().matchAll(TOKEN)) {
    let term = seen.get(token);
    if (term === undefined) {
      term = toTerm(token, stopWords);
      seen.set(token, term);
    }
    if (term !== null) out.push(term);
  }
  return out;
}

/** Term counts and the BM25 document length, which counts only the tokens kept. */
export function termFrequencies(text: string): { terms: Map<string, number>; length: number } {
  const tokens = analyze(text);
  const terms = new Map<string, number>();
  for (const t of tokens) terms.set(t, (terms.get(t) ?? 0) + 1);
  return { terms, length: tokens.length };
}
