// Secret redaction, measured without a stack: `node bench/redaction.ts` (from the repository root, with
// the project's Node). Prints
// - the bar of issue 15 per kind on gitleaks' own rule samples (test/fixtures/redaction/, recorded by
//   scripts/redaction-corpus/generate.sh): true positives tried and caught, false-positive samples and
//   how many were redacted (the test suite explains each one: test/unit/redaction-corpus.test.ts);
// - the cost per memory on the benchmark's agent memories and on keyword-heavy prose;
// - the slowest of 256 KB adversarial inputs built from every rule's keywords.
import { GITLEAKS_RULES, GITLEAKS_VERSION } from '../domain/memories/redaction/gitleaks-rules.ts';
import { redactSecrets } from '../domain/memories/redaction/redact.ts';
import { scoreCorpus } from '../test/support/redaction-corpus.ts';
import { agentMemoryGenerator } from './lib/agent-memories.ts';
import { Corpus } from './lib/corpus.ts';

const scores = scoreCorpus();
const total = { tried: 0, caught: 0, falseSamples: 0, falsePositives: 0 };
console.log(`## Redaction on gitleaks ${GITLEAKS_VERSION} rule samples\n`);
console.log('| kind | gitleaks rules | true positives | caught | % | false-positive samples | redacted |');
console.log('|---|---|---|---|---|---|---|');
for (const s of scores) {
  for (const key of Object.keys(total) as (keyof typeof total)[]) total[key] += s[key];
  const pct = ((100 * s.caught) / s.tried).toFixed(1);
  console.log(`| ${s.kind} | ${s.rules.length} | ${s.tried} | ${s.caught} | ${pct} | ${s.falseSamples} | ${s.falsePositives} |`);
}
console.log(
  `| **all ${scores.length} kinds** | ${GITLEAKS_RULES.length} | ${total.tried} | ${total.caught} | ` +
    `${((100 * total.caught) / total.tried).toFixed(1)} | ${total.falseSamples} | ${total.falsePositives} |`,
);
console.log(`\nlowest per-kind rate: ${Math.min(...scores.map((s) => (100 * s.caught) / s.tried)).toFixed(1)}%`);

const perText = (texts: string[]): number => {
  for (const text of texts.slice(0, 200)) redactSecrets(text);
  const start = performance.now();
  for (const text of texts) redactSecrets(text);
  return ((performance.now() - start) * 1000) / texts.length;
};
const agent = agentMemoryGenerator(new Corpus(process.env.BENCH_DATA_DIR ?? new URL('../../shared/data', import.meta.url).pathname, 7));
const memories = Array.from({ length: 5_000 }, () => agent.memory());
const prose = Array.from({ length: 5_000 }, (_, i) =>
  `Note ${i}: the API key rotation policy says every token is rotated monthly; the auth service and the password reset flow use it. `.repeat(
    4,
  ),
);
console.log(
  `\n## Cost\n\nagent memories (${Math.round(memories.reduce((n, m) => n + m.length, 0) / memories.length)} chars): ` +
    `${perText(memories).toFixed(1)} µs each`,
);
console.log(`keyword-heavy prose (${prose[0]!.length} chars): ${perText(prose).toFixed(1)} µs each`);

const SIZE = 256 * 1024;
const fill = (unit: string): string => unit.repeat(Math.ceil(SIZE / unit.length)).slice(0, SIZE);
const units = new Set(['curl -u a:bcd ', 'curl -H "Authorization: Bearer abcdefgh12" ', 'api_key=abcdefghij1234567890 ']);
for (const rule of GITLEAKS_RULES) for (const keyword of rule.keywords) for (const tail of ['_', '= ']) units.add(keyword + tail);
let worst = { ms: 0, unit: '' };
const start = performance.now();
for (const unit of units) {
  const t = performance.now();
  redactSecrets(fill(unit));
  const ms = performance.now() - t;
  if (ms > worst.ms) worst = { ms, unit };
}
console.log(
  `\n256 KB adversarial inputs: ${units.size}, ${((performance.now() - start) / units.size).toFixed(1)} ms each on average, ` +
    `slowest ${worst.ms.toFixed(0)} ms (${JSON.stringify(worst.unit)} repeated)`,
);
