// The redaction bar of issue 15, measured on the corpus recorded from gitleaks' own rule samples
// (test/fixtures/redaction/gitleaks-samples.json, written by scripts/redaction-corpus/generate.sh).
// Each sample is redacted inside a sentence, as an agent's memory would hold it. A true positive is
// caught when none of the secrets gitleaks itself extracts from it is left in the text; a false positive
// is any redaction at all in one of gitleaks' false-positive samples.
import { readFileSync } from 'node:fs';
import { redactSecrets } from '../../domain/memories/redaction/redact.ts';

export interface CorpusRule {
  id: string;
  kind: string;
  notRun: string | null;
  truePositives: { text: string; secrets: string[] }[];
  falsePositives: string[];
}

export const corpus = JSON.parse(readFileSync(new URL('../fixtures/redaction/gitleaks-samples.json', import.meta.url), 'utf8')) as {
  source: string;
  rules: CorpusRule[];
};

// A one-line sample sits inside a sentence; a multi-line one (a config file, a script) on lines of its own.
export const inSentence = (sample: string): string =>
  sample.includes('\n')
    ? `While debugging the deploy I found this:\n${sample}\nand then we moved on.`
    : `While debugging the deploy I found this: ${sample} and then we moved on.`;

export interface KindScore {
  kind: string;
  rules: string[];
  tried: number;
  caught: number;
  falseSamples: number;
  falsePositives: number;
  missed: string[];
  flagged: string[];
}

export function scoreCorpus(): KindScore[] {
  const scores = new Map<string, KindScore>();
  for (const rule of corpus.rules) {
    if (rule.notRun) continue;
    const score = scores.get(rule.kind) ?? {
      kind: rule.kind,
      rules: [],
      tried: 0,
      caught: 0,
      falseSamples: 0,
      falsePositives: 0,
      missed: [],
      flagged: [],
    };
    scores.set(rule.kind, score);
    score.rules.push(rule.id);
    for (const { text, secrets } of rule.truePositives) {
      if (secrets.length === 0) continue;
      score.tried++;
      const redacted = redactSecrets(inSentence(text)).text;
      if (secrets.every((secret) => !redacted.includes(secret))) score.caught++;
      else score.missed.push(text);
    }
    for (const text of rule.falsePositives) {
      score.falseSamples++;
      if (redactSecrets(inSentence(text)).count > 0) {
        score.falsePositives++;
        score.flagged.push(text);
      }
    }
  }
  return [...scores.values()].sort((a, b) => a.kind.localeCompare(b.kind));
}
