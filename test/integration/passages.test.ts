import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { backfillLagging } from '../../domain/embeddings/backfill.ts';
import { PASSAGE_HANDICAP, passagesOf } from '../../domain/store/passages.ts';
import { compileFilters } from '../../domain/store/filters.ts';
import { indexRanking, semanticCandidates } from '../../domain/search/semantic.ts';
import { query, sql } from '../../domain/sql.ts';
import type { Embedder } from '../../domain/store/embedder.ts';
import { createLocalEmbedder } from '../../infra/embeddings/local.ts';
import { llmEnv } from '../support/llm-env.ts';
import { LlmServer } from '../support/llm-server.ts';
import { eventually, signUp, startStack, type SignedUp, type Stack } from '../support/stack.ts';
import { parseVector, vectorLiteral } from '../../domain/store/vectors.ts';

// Long memories searched by meaning in passages, against the real stack (the bundled model, PostgreSQL with
// pgvector, the org's curator): a question about the middle of a long memory finds it.
const llm = new LlmServer();
let stack: Stack;
let a: SignedUp;
// The same model as the stack's, for the query vectors the test compares with.
let embedder: Embedder;

// A long memory (about 4,000 characters): the site handbook's paragraphs, the last of them, far past the first 512
// tokens, about the backup generator.
const PARAGRAPHS = [
  'Welcome to the Lisbon office handbook. This document collects the practical things every new colleague asks about in their first weeks: where to sit, how to get in, whom to call, and what the building expects of us.',
  'Desks are unassigned. Book one through the room planner before 10am; after that any free desk is yours for the day. Lockers on the second floor take the same badge as the front door, and are emptied every Friday evening.',
  'The front door opens with your badge from 7am to 9pm on weekdays. Outside those hours the night porter lets you in after you sign the visitor book. Lost badges are replaced by reception within one working day.',
  'Lunch is catered on Tuesdays and Thursdays. Tell the office manager about allergies when you join; the caterer labels every dish. The kitchen on the third floor has two coffee machines, descaled every Wednesday morning.',
  'Meeting rooms on the fourth floor have video equipment. Please leave the whiteboards clean and the chairs where you found them. Rooms booked but not used for fifteen minutes are released automatically.',
  'Bicycles go in the basement cage, which the badge also opens. There are showers next to the cage and towels are provided. Scooters must not be charged inside the building under the landlord’s fire rules.',
  'Printing is on the second floor. Print jobs wait until you tap your badge at the printer, so nothing sensitive is left in the tray. Toner and paper are in the cupboard beside it; tell reception when the last box is opened.',
  'The first-aid kits are in the kitchen and by the reception desk. Two trained first aiders sit on each floor; their names are on the notice board. In an emergency call 112 first, then reception.',
  'Fire drills happen twice a year without notice. Leave by the nearest stairs, never the lift, and gather in the square across the street until the fire wardens count everyone and say it is safe to go back.',
  'Guests sign in at reception and wear a visitor badge. Whoever invited them collects them from the lobby and walks them out again; guests never wander the floors alone, and their badges are handed back before they leave.',
  'Post arrives at reception around noon and is sorted into pigeonholes by team. Parcels for individuals are kept behind the desk for a week; tell reception if you expect something valuable or perishable.',
  'The quiet room on the third floor is for focused work and phone-free breaks. No calls, no food, and headphones for any sound. It cannot be booked: first come, first served, for at most two hours at a time.',
  'Plants on every floor are watered by an outside company on Mondays. Please do not water them yourself: several have died of kindness. Report a sad-looking one to the office manager instead.',
  'Recycling bins are colour coded: blue for paper, yellow for plastic and metal, green for glass. Batteries and cartridges go in the box beside the printer, which reception sends back to the supplier.',
  'Parking is limited to six spaces, kept for visitors and colleagues with a medical need. Everyone else uses the public garage two streets away, which gives a discount on the company card.',
  'The diesel generator in the basement keeps the server room and the emergency lights running during a power cut. Facilities start it under load for half an hour on the first Monday of every month, so expect some noise around 8am.',
];
const HANDBOOK = PARAGRAPHS.join('\n\n');

const save = async (content: string, namespace = 'site'): Promise<string> => {
  const res = await stack.api.post('/api/memories', { token: a.token, body: { content, namespace } });
  expect(res.status).toBe(201);
  return res.body.id;
};
const search = async (body: Record<string, unknown>) => {
  const res = await stack.api.post('/api/memories/search', { token: a.token, body });
  expect(res.status).toBe(200);
  return res.body.hits as { id: string; score: number; matched_passage?: { start: number; end: number; text: string } }[];
};
const allEmbedded = () =>
  eventually(async () => {
    const s = (await stack.api.get('/api/memories/embeddings', { token: a.token })).body;
    return s.total > 0 && s.embedded === s.total && s;
  }, 60_000);
// The memory's rows: its text's vector is passage 0.
const rowsOf = async (id: string) =>
  query(
    stack.orm.em.fork(),
    sql<{
      passage: number;
      embedding: string;
    }>`select passage, embedding::text as embedding from memory_embeddings where org_id = ${a.org.id} and memory_id = ${id}
      order by passage`,
  );

beforeAll(async () => {
  await llm.start();
  stack = await startStack({ embeddings: true, env: { WRITE_RATE_LIMIT_PER_MINUTE: '0', ...llmEnv(llm) } });
  a = await signUp(stack.api);
  embedder = await createLocalEmbedder({ modelDir: process.env.EMBEDDING_MODEL_DIR!, sessions: 1, threads: 1 });
}, 120_000);
afterAll(async () => {
  await embedder?.close();
  await stack?.close();
  await llm.close();
});

describe('long memories searched in passages', () => {
  it('finds a long memory by a question about its middle, scored by its best passage', async () => {
    const handbook = await save(HANDBOOK);
    const others = [
      await save('The Porto warehouse receives deliveries on weekday mornings only.'),
      await save('Our payroll runs on the 25th; expenses filed by the 20th are paid with it.'),
      await save('The office dog, Mango, is allowed on the ground floor only.'),
    ];
    const status = await allEmbedded();
    // Status counts memories, not passages.
    expect(status.total).toBe(4);
    const rows = await rowsOf(handbook);
    expect(rows.map((r) => r.passage)).toEqual([0, ...passagesOf(HANDBOOK).map((_, i) => i + 1)]);
    for (const other of others) expect((await rowsOf(other)).map((r) => r.passage)).toEqual([0]);

    const question = 'how often is the backup power tested?';
    for (const mode of ['semantic', 'hybrid']) {
      const hits = await search({ query: question, mode, k: 3 });
      expect(hits[0]!.id).toBe(handbook);
      // The hit says where in the memory the answer lies; short memories carry no passage.
      const passage = hits[0]!.matched_passage!;
      expect(passage.text).toContain('diesel generator');
      expect(HANDBOOK.slice(passage.start, passage.end)).toBe(passage.text);
      for (const hit of hits.slice(1)) expect(hit.matched_passage).toBeUndefined();
    }
    expect((await search({ query: 'generator first Monday', k: 3 }))[0]!.matched_passage).toBeUndefined();
    // An agent over MCP gets the same passage.
    const client = new Client({ name: 'passages-tests', version: '1.0.0' });
    await client.connect(
      new StreamableHTTPClientTransport(new URL('/mcp', stack.baseUrl), {
        requestInit: { headers: { authorization: `Bearer ${a.token}` } },
      }),
    );
    const asked = await client.callTool({ name: 'search_memories', arguments: { query: question, k: 3 } });
    const [first] = (asked.structuredContent as { hits: { id: string; matched_passage?: string }[] }).hits;
    expect(first!.id).toBe(handbook);
    expect(first!.matched_passage).toContain('diesel generator');
    await client.close();
    // The memory is scored by its best vector, a passage's (less the handicap): its text's vector (cut at 512
    // tokens, before the generator's paragraph) scores lower.
    const hit = (await search({ query: question, mode: 'semantic', k: 4 })).find((h) => h.id === handbook)!;
    const [q] = await embedQuery(question);
    const [own, ...passages] = rows.map((r) => dot(parseVector(r.embedding), q!));
    const best = Math.max(...passages) - PASSAGE_HANDICAP;
    expect(best).toBeGreaterThan(own! + 0.05);
    expect(hit.score).toBeCloseTo(best, 5);
  });

  it("puts the passage that matched into a chat's prompt when it lies past the memory's beginning", async () => {
    // Past the 4,000 characters of a memory a chat's prompt holds.
    const long = [...PARAGRAPHS.slice(0, -1), ...PARAGRAPHS.slice(0, -1), PARAGRAPHS.at(-1)!].join('\n\n');
    expect(long.indexOf('diesel generator')).toBeGreaterThan(4000);
    const id = await save(long, 'chat');
    await allEmbedded();
    await query(stack.orm.em.fork(), sql`update orgs set plan = 'team' where id = ${a.org.id}`);
    llm.reset();
    const res = await stack.api.post('/api/chat', {
      token: a.token,
      body: { messages: [{ role: 'user', content: 'how often is the backup power tested?' }], namespace: 'chat' },
    });
    expect(res.status).toBe(200);
    expect(res.body.citations.map((c: { id: string }) => c.id)).toContain(id);
    expect(llm.calls[0]!.system).toContain('Facilities start it under load for half an hour on the first Monday of every month');
    expect(llm.calls[0]!.system).toContain('Welcome to the Lisbon office handbook.');
  });

  it('reads deeper in the index when passages of one memory fill the first rows', async () => {
    const em = stack.orm.em.fork();
    const compiled = await compileFilters(em, a.org.id, { namespace: 'site' });
    const [q] = await embedQuery('office rules for new colleagues');
    // The handbook's passages are nearer than the short memories, so the first 3 rows hold fewer than 3 memories.
    const first = await query(em, semanticCandidates(a.org.id, vectorLiteral(q!), embedder.model, 3, compiled, 'shared'));
    expect(new Set(first.map((r) => r.id)).size).toBeLessThan(3);
    const ranked = await indexRanking(em, a.org.id, vectorLiteral(q!), embedder.model, 3, compiled, 'shared');
    expect(ranked).toHaveLength(3);
    expect(new Set(ranked.map((r) => r.id)).size).toBe(3);
  });

  it('drops the passages with the text: an edit to a short text, a delete', async () => {
    const id = await save(HANDBOOK, 'edits');
    await eventually(async () => (await rowsOf(id)).length > 1, 60_000);
    const patched = await stack.api.patch(`/api/memories/${id}`, { token: a.token, body: { content: 'The handbook moved to the wiki.' } });
    expect(patched.status).toBe(200);
    await eventually(async () => {
      const rows = await rowsOf(id);
      return rows.length === 1 && rows[0]!.passage === 0;
    }, 60_000);
    const again = await save(HANDBOOK, 'edits');
    await eventually(async () => (await rowsOf(again)).length > 1, 60_000);
    expect((await stack.api.delete(`/api/memories/${again}`, { token: a.token })).status).toBe(204);
    expect(await rowsOf(again)).toEqual([]);
  });

  it('gives passages to a long memory embedded without them, reusing its vector, on a backfill', async () => {
    const id = await save(`${HANDBOOK}\n\nRevised in November.`, 'older');
    await eventually(async () => (await rowsOf(id)).length > 1, 60_000);
    const [text] = await rowsOf(id);
    // As a memory saved before passages existed.
    await query(stack.orm.em.fork(), sql`delete from memory_embeddings where org_id = ${a.org.id} and memory_id = ${id} and passage > 0`);
    const res = await stack.api.post('/api/memories/embeddings/backfill', { token: a.token });
    expect(res.status).toBe(202);
    const rows = await eventually(async () => {
      const rows = await rowsOf(id);
      return rows.length > 1 && rows;
    }, 60_000);
    expect(rows.length).toBe(passagesOf(`${HANDBOOK}\n\nRevised in November.`).length + 1);
    expect(rows[0]!.embedding).toBe(text!.embedding);
  });

  it('walks, at worker start, each org a migration asked a backfill of, once', async () => {
    const id = await save(`${HANDBOOK}\n\nRevised in December.`, 'older');
    await eventually(async () => (await rowsOf(id)).length > 1, 60_000);
    await query(stack.orm.em.fork(), sql`delete from memory_embeddings where org_id = ${a.org.id} and memory_id = ${id} and passage > 0`);
    // As migrations/0021 asks for orgs holding long memories.
    await query(stack.orm.em.fork(), sql`insert into embedding_backfills (org_id) values (${a.org.id})`);
    expect(await backfillLagging(stack.orm.em.fork(), embedder.model)).toBeGreaterThanOrEqual(1);
    await eventually(async () => (await rowsOf(id)).length > 1, 60_000);
    expect(await query(stack.orm.em.fork(), sql`select org_id from embedding_backfills`)).toEqual([]);
  });
});

const embedQuery = (text: string) => embedder.embedQueries([text]);
const dot = (x: Float32Array, y: Float32Array) => x.reduce((sum, v, i) => sum + v * y[i]!, 0);
