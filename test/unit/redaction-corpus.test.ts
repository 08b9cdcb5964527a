import { describe, expect, it } from 'vitest';
import { GITLEAKS_GLOBAL_ALLOWLISTS, GITLEAKS_RULES, GITLEAKS_VERSION } from '../../domain/memories/redaction/gitleaks-rules.ts';
import { gitleaksFindings, keywordScanner } from '../../domain/memories/redaction/gitleaks.ts';
import { REDACTION_KINDS } from '../../domain/memories/redaction/redact.ts';
import { corpus, inSentence, scoreCorpus } from '../support/redaction-corpus.ts';

// The bar of issue 15 on gitleaks' own samples (see test/support/redaction-corpus.ts): at least 95% of the
// true positives caught for every kind, and no false positive that is not a secret.

const scores = scoreCorpus();
const scanKeywords = keywordScanner(GITLEAKS_RULES.flatMap((rule) => rule.keywords));
const ownerOf = new Map(corpus.rules.flatMap((rule) => rule.falsePositives.map((text) => [text, rule.id] as const)));

// A sample gitleaks lists as a false positive of one rule can be a true positive of another: gitleaks
// checks each rule's samples against that rule alone. When any other gitleaks rule reports it, gitleaks
// run with its whole configuration reports it too, and redacting it is right.
const reportedByAnotherRule = (text: string): boolean => {
  const wrapped = inSentence(text);
  const present = scanKeywords(wrapped);
  return GITLEAKS_RULES.some(
    (rule) => rule.id !== ownerOf.get(text) && gitleaksFindings(rule, wrapped, present, GITLEAKS_GLOBAL_ALLOWLISTS).length > 0,
  );
};

// The rest that the service redacts, each a secret by the service's own rules and judged one here.
const REDACTED_ON_PURPOSE: Record<string, string> = {
  ',apiKey:"6fe4476ee5a1832882e326b506d14126",': "an Algolia API key (yarn's, public by its vendor's design): a key all the same",
  'MailchimpSDK.initialize(token: 3012a5754bbd716926f99c028f7ea428-us18)': 'a Mailchimp API key in its exact format, passed as `token:`',
  'nonMatchingToken := "sm_sat_j8xm2a535a"': 'a random value assigned to a token variable',
  'nonMatchingToken := "task_test_908juab5cnxcz1uudhddngckbyrzwv"': 'a random value assigned to a token variable',
  'telegram_api_token = "5185:Adlnqy41cdbj2wn2i0c2mvz2whs78ql7fpe"': 'a random value assigned to a token variable',
  'telegram_api_token = "21600788327652548:Au0h0z--sfhgbsckb6oc5_fh-am_3egbvs1"': 'a random value assigned to a token variable',
  'telegram_api_token = "telegram_api_token = "52420232:Ahellozp0iibqcjfzv7f50nu_avvy-3js6zx6egt""':
    'a random value assigned to a token variable',
  'telegram_api_token = "telegram_api_token = "51715930:A-some-other-thing-rr69xdoiw-0btxb48kq8m_v4irh7f8ehyq""':
    'a random value assigned to a token variable',
  'telegram_api_token = "telegram_api_token = "25461674:A_nwkmoc4j65yxjh5fd_4jx8ef250o9-hapq""':
    'a random value assigned to a token variable',
  'telegram_api_token = "telegram_api_token = "18295157:Avzi2-kcb43a6m_jbtr94zbyda2q7i6303xhello""':
    'a random value assigned to a token variable',
  'telegram_api_token = "telegram_api_token = "82252139:Arvmc1pywh_9b1uzc1mlwyvd4x_870frntg-some-other-thing""':
    'a random value assigned to a token variable',
  'telegram_api_token = "telegram_api_token = "31326429:A_np3o49qcysmo_w3o2-n0jybbx1oy-9vh-4_""':
    'a random value assigned to a token variable',
};

describe('redaction against gitleaks rule samples', () => {
  it(`runs the rule set of the recorded gitleaks version (${GITLEAKS_VERSION})`, () => {
    expect(corpus.source).toContain(GITLEAKS_VERSION);
    const run = corpus.rules.filter((rule) => !rule.notRun).map((rule) => rule.id);
    expect(GITLEAKS_RULES.map((rule) => rule.id).sort()).toEqual(run.sort());
    for (const rule of GITLEAKS_RULES) expect(REDACTION_KINDS).toContain(rule.kind);
  });

  it.each(scores.map((score) => [score.kind, score] as const))('%s: at least 95% of the true positives caught', (_kind, score) => {
    expect(score.tried).toBeGreaterThan(0);
    expect(score.caught / score.tried, `missed: ${JSON.stringify(score.missed.slice(0, 3))}`).toBeGreaterThanOrEqual(0.95);
  });

  it('redacts no false-positive sample that is not a secret', () => {
    const flagged = scores.flatMap((score) => score.flagged);
    const unexplained = flagged.filter((text) => !reportedByAnotherRule(text) && !(text in REDACTED_ON_PURPOSE));
    expect(unexplained).toEqual([]);
    // Every entry of the list is still needed, so it cannot quietly outlive the behaviour it explains.
    for (const text of Object.keys(REDACTED_ON_PURPOSE)) expect(flagged, text).toContain(text);
  });
});
