// Recall of conversational memory through the API, on LoCoMo (Maharana et al., 2024: 10 long conversations
// between two people, 5,882 turns, questions with the turns that answer them), read by locomo-set.ts:
//   BENCH_SUITES=locomo bash scripts/bench.sh   (LOCOMO_JSON names another copy of locomo10.json)
// Each turn is saved as one memory ("Speaker: text", a shared photo's caption appended; the speaker also in
// metadata.name, with role user, as conversation capture saves a message), one namespace per conversation; every
// question is searched in its conversation's namespace (k 10) in each mode, and a question scores the share of its
// evidence turns found. Category 5 (adversarial: questions with no answer) is left out.
// Each session is a thread, as a conversation capture saves it (metadata.parent_ref, chunk_index: the turn's
// number), so a turn is searched with the turns before it (domain/store/thread-context.ts); LOCOMO_THREADS=none
// saves the turns alone. LOCOMO_ORGS=conversation saves each conversation into an org of its own instead, so that
// BM25's statistics (document frequencies, mean length) are the conversation's rather than the ten conversations'.
// LOCOMO_UNIT=session saves each session whole as one memory instead (its date, then its turns a line each: 1,200 to
// 5,900 characters, most of them long memories, searched by meaning in passages: domain/store/passages.ts), and
// a question then scores the share of its evidence sessions found; LOCOMO_K sets k (10 by default).
import { conversationEnd, evidenceOf, readLocomo, sessionsOf, sessionTime, turnLine } from './locomo-set.ts';
import { ApiClient } from '../../test/support/api-client.ts';
import pg from 'pg';
import { paidOrg, paidOrgPassword, untilEmbedded } from '../lib/service.ts';
import { closedLoop } from '../lib/stats.ts';

const MODES = ['lexical', 'semantic', 'hybrid'] as const;
const CATEGORIES: Record<number, string> = { 1: 'multi-hop', 2: 'temporal', 3: 'open-domain', 4: 'single-hop' };
const K = Number(process.env.LOCOMO_K ?? 10);
const bySession = process.env.LOCOMO_UNIT === 'session';

const samples = readLocomo();
const memories = samples.flatMap((s) =>
  bySession
    ? sessionsOf(s).map(([key, turns]) => ({
        namespace: `locomo-${s.sample_id}`,
        content: `${String(s.conversation[`${key}_date_time`] ?? '')}\n${turns.map(turnLine).join('\n')}`.trim(),
        occurredAt: sessionTime(s, key),
        ref: `${s.sample_id}/D${key.split('_')[1]}`,
        name: undefined as string | undefined,
        thread: {},
      }))
    : sessionsOf(s)
        .flatMap(([key, turns]) => turns.map((t) => ({ t, occurredAt: sessionTime(s, key) })))
        .map(({ t, occurredAt }) => ({
          namespace: `locomo-${s.sample_id}`,
          content: turnLine(t),
          occurredAt,
          ref: `${s.sample_id}/${t.dia_id}`,
          // dia_id is "D<session>:<turn>".
          name: t.speaker,
          thread: { parent_ref: `${s.sample_id}/${t.dia_id.split(':')[0]}`, chunk_index: Number(t.dia_id.split(':')[1]) },
        })),
);
const questions = samples.flatMap((s) =>
  s.qa
    .filter((q) => q.category in CATEGORIES)
    .map((q) => ({
      namespace: `locomo-${s.sample_id}`,
      question: q.question,
      category: q.category,
      asked: conversationEnd(s),
      evidence: new Set(evidenceOf(q).map((e) => `${s.sample_id}/${bySession ? e.split(':')[0] : e}`)),
    }))
    .filter((q) => q.evidence.size > 0),
);

const api = new ApiClient(process.env.BENCH_API_URL ?? 'http://127.0.0.1:3099');
const orgPerConversation = process.env.LOCOMO_ORGS === 'conversation';
const threads = process.env.LOCOMO_THREADS !== 'none' && !bySession;
const layout = bySession ? 'a memory per session' : threads ? 'a thread per session' : 'no threads';
// BENCH_REUSE=1 (scripts/bench.sh keeps the database then): the one org an earlier run seeded in this layout is searched
// again, without saving and embedding its turns anew, e.g. while tuning search. An org per conversation is always seeded.
const label = `locomo-${bySession ? 'sessions' : threads ? 'speakers-threads' : 'speakers-turns'}`;
const reused = process.env.BENCH_REUSE === '1' && !orgPerConversation ? await seededOrg(label, memories.length) : null;
const tokens = new Map<string, string>();
for (const namespace of new Set(memories.map((m) => m.namespace))) {
  if (reused) tokens.set(namespace, reused);
  else if (orgPerConversation || tokens.size === 0) tokens.set(namespace, (await paidOrg(api, label)).token);
  else tokens.set(namespace, tokens.values().next().value!);
}
if (!reused)
  await closedLoop(16, memories.length, async (i) => {
    const m = memories[i]!;
    const res = await api.post('/api/memories', {
      token: tokens.get(m.namespace)!,
      body: {
        content: m.content,
        namespace: m.namespace,
        occurred_at: m.occurredAt,
        metadata: { ref: m.ref, ...(m.name ? { role: 'user', name: m.name } : {}), ...(threads ? m.thread : {}) },
      },
    });
    if (res.status !== 201) throw new Error(`save answered ${res.status}: ${res.text}`);
  });
for (const token of new Set(tokens.values())) await untilEmbedded(api, token);
console.log(
  `LoCoMo: ${memories.length} ${bySession ? 'sessions' : 'turns'} in ${samples.length} conversations ` +
    `(${orgPerConversation ? 'an org each' : 'one org'}, ${layout}${reused ? ', reused' : ''}), ${questions.length} questions`,
);

console.log(`| mode | evidence recall@${K} | hit@${K} | ${Object.values(CATEGORIES).join(' | ')} |`);
console.log(
  `|---|---|---|${Object.keys(CATEGORIES)
    .map(() => '---|')
    .join('')}`,
);
// Each mode twice: with the time words of a question read as a window of event time (against the conversation's last
// session, when its questions are asked), and searched as words only.
for (const [mode, resolve_time] of MODES.flatMap(
  (m) =>
    [
      [m, false],
      [m, true],
    ] as const,
)) {
  const recall: number[] = [];
  await closedLoop(2, questions.length, async (i) => {
    const q = questions[i]!;
    const res = await api.post('/api/memories/search', {
      token: tokens.get(q.namespace)!,
      body: { query: q.question, k: K, mode, namespace: q.namespace, resolve_time, reference_time: q.asked },
    });
    if (res.status !== 200) throw new Error(`${mode} search answered ${res.status}: ${res.text}`);
    const found = (res.body.hits as { metadata: { ref: string } }[]).filter((h) => q.evidence.has(h.metadata.ref)).length;
    recall[i] = found / q.evidence.size;
  });
  const mean = (of: number[]) => `${((100 * of.reduce((a, b) => a + b, 0)) / of.length).toFixed(1)}%`;
  const byCategory = Object.keys(CATEGORIES).map((c) => mean(recall.filter((_, i) => questions[i]!.category === Number(c))));
  // hit@k: the share of questions with at least one of their evidence turns found.
  const hit = mean(recall.map((r) => (r > 0 ? 1 : 0)));
  console.log(`| ${mode}${resolve_time ? ', time words read' : ''} | ${mean(recall)} | ${hit} | ${byCategory.join(' | ')} |`);
}

// A new token to the newest org of this layout that holds all its memories, or null when there is none.
async function seededOrg(prefix: string, count: number): Promise<string | null> {
  const db = new pg.Client({ connectionString: process.env.DATABASE_URL });
  await db.connect();
  const { rows } = await db.query<{ email: string }>(
    `select u.email from users u join memberships m on m.user_id = u.id where u.email like $1
      and (select count(*) from memories where org_id = m.org_id) = $2 order by u.created_at desc limit 1`,
    [`${prefix}-%@example.test`, count],
  );
  await db.end();
  if (!rows[0]) return null;
  const session = await api.post('/api/auth/login', { body: { email: rows[0].email, password: paidOrgPassword } });
  const issued = await api.post('/api/auth/tokens', { cookie: session.cookie, body: { name: `locomo-again-${Date.now()}` } });
  if (issued.status !== 201) throw new Error(`token answered ${issued.status}: ${issued.text}`);
  return issued.body.raw as string;
}
