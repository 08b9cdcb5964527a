// How a gitleaks rule is judged, as gitleaks itself does (detect/detect.go): the rule runs only when one
// of its keywords is in the text; its secret is the rule's secret group, else the first non-empty group,
// else the whole match; a secret whose Shannon entropy is not above the rule's threshold is not one; the
// global allowlist and the rule's own allowlists (a regex on the secret, the match or the line; stop
// words in the secret; all of them or any) can each clear it.
import { shannonEntropy } from './entropy.ts';
import type { Finding } from './finding.ts';

export interface GitleaksAllowlist {
  /** Every check must hold (gitleaks' AND condition); otherwise any one clears the finding. */
  readonly all: boolean;
  readonly target: 'secret' | 'match' | 'line';
  readonly patterns: readonly RegExp[];
  readonly stopWords: readonly string[];
}

export interface GitleaksRule {
  readonly id: string;
  readonly kind: string;
  /** Flags `gd`: the indices of the secret group are needed to replace only the secret. */
  readonly pattern: RegExp;
  /** Context the generator took off the front of gitleaks' pattern (see scripts/redaction-corpus/convert.ts). */
  readonly context: { readonly identifierChars: number } | { readonly curlWithinLines: number } | null;
  readonly secretGroup: number;
  readonly entropy: number;
  readonly keywords: readonly string[];
  readonly allowlists: readonly GitleaksAllowlist[];
}

/** The rules' keywords that a text holds. */
export type KeywordScan = (text: string) => ReadonlySet<string>;

/**
 * Finds every given keyword in a text in one pass over its lower-case form: keywords are filed by their
 * first two characters, so each position costs one numeric map lookup (a search per keyword would cost
 * hundreds of scans of every text).
 */
export function keywordScanner(keywords: Iterable<string>): KeywordScan {
  const byPrefix = new Map<number, string[]>();
  for (const keyword of new Set(keywords)) {
    if (keyword.length < 2) throw new Error(`keyword too short to index: ${keyword}`);
    const prefix = keyword.charCodeAt(0) * 65536 + keyword.charCodeAt(1);
    byPrefix.set(prefix, [...(byPrefix.get(prefix) ?? []), keyword]);
  }
  return (text) => {
    const present = new Set<string>();
    const lower = text.toLowerCase();
    for (let i = 0; i + 1 < lower.length; i++) {
      const candidates = byPrefix.get(lower.charCodeAt(i) * 65536 + lower.charCodeAt(i + 1));
      if (candidates === undefined) continue;
      for (const keyword of candidates) if (!present.has(keyword) && lower.startsWith(keyword, i)) present.add(keyword);
    }
    return present;
  };
}

// The line around a match, for allowlists that judge the line. At most LINE_REACH characters either side
// of the match are looked at: on a 256 KB line, each of thousands of matches would otherwise scan it all.
const LINE_REACH = 1024;
const lineAround = (text: string, start: number, end: number): string => {
  const left = Math.max(0, start - LINE_REACH);
  const from = left + text.slice(left, start).lastIndexOf('\n') + 1;
  const right = text.slice(end, end + LINE_REACH).indexOf('\n');
  return text.slice(from, right < 0 ? Math.min(text.length, end + LINE_REACH) : end + right);
};

// gitleaks' generic rule has 1,477 stop words; looking up each substring of a short secret in sets by
// length costs a few hundred lookups where `includes` for every word costs thousands of scans.
const stopWordIndexes = new WeakMap<readonly string[], Map<number, Set<string>>>();
function containsStopWord(stopWords: readonly string[], lower: string): boolean {
  let byLength = stopWordIndexes.get(stopWords);
  if (byLength === undefined) {
    byLength = new Map();
    for (const word of stopWords) {
      const bucket = byLength.get(word.length) ?? new Set<string>();
      bucket.add(word);
      byLength.set(word.length, bucket);
    }
    stopWordIndexes.set(stopWords, byLength);
  }
  for (const [length, words] of byLength) {
    for (let i = 0; i + length <= lower.length; i++) if (words.has(lower.slice(i, i + length))) return true;
  }
  return false;
}

function allowed(allowlists: readonly GitleaksAllowlist[], secret: string, match: string, line: () => string): boolean {
  const lower = secret.toLowerCase();
  for (const a of allowlists) {
    const target = a.target === 'match' ? match : a.target === 'line' ? line() : secret;
    const checks: boolean[] = [];
    if (a.patterns.length > 0) checks.push(secret !== '' && a.patterns.some((p) => p.test(target)));
    if (a.stopWords.length > 0) checks.push(containsStopWord(a.stopWords, lower));
    if (a.all ? checks.every(Boolean) : checks.some(Boolean)) return true;
  }
  return false;
}

const IDENTIFIER_CHAR = /[\w.-]/;

// The last index in sorted `xs` below `limit`, or -1.
function lastBelow(xs: readonly number[], limit: number): number {
  let lo = 0;
  let hi = xs.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (xs[mid]! < limit) lo = mid + 1;
    else hi = mid;
  }
  return lo - 1;
}

// Where the text's `curl` commands and line breaks are, found once per text for the curl rules, so that
// each candidate looks them up instead of scanning back (a long line with many `-u` would be quadratic).
class CurlIndex {
  readonly curls: number[];
  readonly breaks: number[];
  constructor(text: string) {
    this.curls = [...text.matchAll(/\bcurl\b/g)].map((m) => m.index);
    this.breaks = [...text.matchAll(/\r\n?|\n/g)].map((m) => m.index);
  }
}

// Where gitleaks' whole pattern would have started its match, given where the rest of it matched, or -1
// when the context it asks for is not there. `floor` is the end of the previous match.
function contextStart(rule: GitleaksRule, text: string, at: number, floor: number, curlIndex: () => CurlIndex): number {
  const context = rule.context;
  if (context === null) return at;
  if ('identifierChars' in context) {
    let start = at;
    while (start > floor && at - start < context.identifierChars && IDENTIFIER_CHAR.test(text[start - 1]!)) start--;
    return start;
  }
  // The first `curl` on the same line or up to N line breaks earlier (gitleaks counts a blank line's
  // two breaks as one; here each counts, which reaches back a little less).
  const { curls, breaks } = curlIndex();
  const breakIndex = lastBelow(breaks, at) - context.curlWithinLines;
  const from = Math.max(floor, breakIndex >= 0 ? breaks[breakIndex]! + 1 : 0);
  const first = lastBelow(curls, from) + 1;
  return first < curls.length && curls[first]! + 4 <= at ? curls[first]! : -1;
}

export function gitleaksFindings(
  rule: GitleaksRule,
  text: string,
  present: ReadonlySet<string>,
  global: readonly GitleaksAllowlist[],
): Finding[] {
  if (rule.keywords.length > 0 && !rule.keywords.some((keyword) => present.has(keyword))) return [];
  const findings: Finding[] = [];
  let floor = 0;
  let curls: CurlIndex | undefined;
  const curlIndex = (): CurlIndex => (curls ??= new CurlIndex(text));
  for (const m of text.matchAll(rule.pattern)) {
    const matchStart = contextStart(rule, text, m.index, floor, curlIndex);
    if (matchStart < 0) continue;
    floor = m.index + m[0].length;
    // gitleaks trims newlines off the match before it judges it.
    const whole = text.slice(matchStart, floor).replace(/^\n+|\n+$/g, '');
    if (whole === '') continue;
    let group = 0;
    if (rule.secretGroup > 0) group = m[rule.secretGroup] === undefined ? -1 : rule.secretGroup;
    else for (let g = 1; g < m.length && group === 0; g++) if (m[g]) group = g;
    if (group < 0) continue;
    const wholeAt = matchStart + text.slice(matchStart, floor).indexOf(whole);
    const [start, end] = group === 0 ? [wholeAt, wholeAt + whole.length] : m.indices![group]!;
    const secret = text.slice(start, end);
    if (rule.entropy > 0 && shannonEntropy(secret) <= rule.entropy) continue;
    const line = (): string => lineAround(text, matchStart, floor);
    if (allowed(global, secret, whole, line) || allowed(rule.allowlists, secret, whole, line)) continue;
    findings.push({ start, end, kind: rule.kind });
  }
  return findings;
}
