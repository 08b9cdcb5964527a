// Memories are written by agents that paste whatever they were looking at: config files, curl commands,
// stack traces. Secrets are replaced by `[REDACTED:<kind>]` before anything is stored, so a leaked
// credential never reaches the database, its backups, a search index, an export or a webhook.
//
// Two rule sets run, in this order, each seeing only what the ones before it left:
// 1. our vendor rules (own-rules.ts), whose kinds the service has always reported;
// 2. gitleaks' vendor rules (gitleaks-rules.ts, generated from gitleaks' default configuration);
// 3. our heuristics for unprefixed shapes (URL passwords, Bearer and Basic headers, assignments);
// 4. gitleaks' heuristics (curl credentials, its generic API key rule).
// The most specific shapes go first, so a token is reported under its vendor's kind and once.
import type { Finding } from './finding.ts';
import { gitleaksFindings, keywordScanner, type GitleaksRule } from './gitleaks.ts';
import { GITLEAKS_GLOBAL_ALLOWLISTS, GITLEAKS_RULES } from './gitleaks-rules.ts';
import { HEURISTIC_RULES, isAbbreviated, isPlaceholder, ownFindings, VENDOR_RULES, type Rule } from './own-rules.ts';

export interface RedactionResult {
  text: string;
  count: number;
  /** Distinct kinds that were redacted, sorted. */
  kinds: string[];
}

type Step = (text: string, keywords: ReadonlySet<string>) => Finding[];

const scanKeywords = keywordScanner(GITLEAKS_RULES.flatMap((rule) => rule.keywords));

const GITLEAKS_HEURISTICS = new Set(['curl-auth-header', 'curl-auth-user', 'generic-api-key']);
const own =
  (rule: Rule): Step =>
  (text) =>
    ownFindings(rule, text);
const gitleaks =
  (rule: GitleaksRule): Step =>
  (text, keywords) =>
    gitleaksFindings(rule, text, keywords, GITLEAKS_GLOBAL_ALLOWLISTS);
// gitleaks' heuristics take an abbreviated value (`ops_eyJzaWdu...`) or a counted-out sample
// (`xoxp-1234567890`) for a secret; ours do not (own-rules.ts), and neither do theirs here.
const judged =
  (step: Step): Step =>
  (text, keywords) =>
    step(text, keywords).filter(
      (f) =>
        !isAbbreviated(text.slice(f.end - 2, f.end + 1)) &&
        !isAbbreviated(text.slice(f.end, f.end + 3)) &&
        !isPlaceholder(text.slice(f.start, f.end)),
    );

const STEPS: readonly Step[] = [
  ...VENDOR_RULES.map(own),
  ...GITLEAKS_RULES.filter((r) => !GITLEAKS_HEURISTICS.has(r.id)).map(gitleaks),
  ...HEURISTIC_RULES.map(own),
  ...GITLEAKS_RULES.filter((r) => GITLEAKS_HEURISTICS.has(r.id)).map((r) => judged(gitleaks(r))),
];

export const REDACTION_KINDS: readonly string[] = Object.freeze(
  [...new Set([...VENDOR_RULES, ...HEURISTIC_RULES, ...GITLEAKS_RULES].map((rule) => rule.kind))].sort(),
);

const marker = (kind: string): string => `[REDACTED:${kind}]`;
const MARKER = /\[REDACTED:[a-z0-9_]+\]/g;

// Where markers sit in `text`, so a later rule can refuse a finding that overlaps one (a URL password or a
// generic value could otherwise swallow `[REDACTED:...]` and report it a second time).
function markerSpans(text: string): [number, number][] {
  if (!text.includes('[REDACTED:')) return [];
  return [...text.matchAll(MARKER)].map((m) => [m.index, m.index + m[0].length]);
}

export function redactSecrets(input: string): RedactionResult {
  let text = input;
  let keywords = scanKeywords(text);
  let count = 0;
  const kinds = new Set<string>();

  for (const step of STEPS) {
    const findings = step(text, keywords);
    if (findings.length === 0) continue;
    const spans = markerSpans(text);
    let next = 0; // findings come left to right, so one cursor over the spans suffices
    let out = '';
    let at = 0;
    for (const { start, end, kind } of findings) {
      while (next < spans.length && spans[next]![1] <= start) next++;
      if (start < at || (spans[next] !== undefined && spans[next]![0] < end)) continue;
      out += text.slice(at, start) + marker(kind);
      at = end;
      count++;
      kinds.add(kind);
    }
    if (at === 0) continue;
    text = out + text.slice(at);
    keywords = scanKeywords(text);
  }

  return { text, count, kinds: [...kinds].sort() };
}
