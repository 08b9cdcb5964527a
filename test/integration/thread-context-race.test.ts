import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { embedMemories } from '../../domain/embeddings/store.ts';
import type { Embedder } from '../../domain/store/embedder.ts';
import { withContext } from '../../domain/store/thread-context.ts';
import { parseVector } from '../../domain/store/vectors.ts';
import { query, sql } from '../../domain/sql.ts';
import { createEmbedder } from '../../infra/embeddings/index.ts';
import { createLogger } from '../../infra/logger.ts';
import { signUp, startStack, type SignedUp, type Stack } from '../support/stack.ts';

// Two activities of the curator embedding a thread's chunks side by side, each having read the other's chunk
// before it was written: the chunk after still ends up mixed with the one before it. No worker runs here, so the
// test alone decides who embeds what, and when.
let stack: Stack;
let a: SignedUp;
let embedder: Embedder;
beforeAll(async () => {
  stack = await startStack({ worker: false, relay: false, embeddings: true });
  a = await signUp(stack.api);
  embedder = (await createEmbedder(stack.config, createLogger('silent', 'test'), 'documents'))!;
}, 120_000);
afterAll(async () => {
  await embedder?.close();
  await stack?.close();
});

const save = async (content: string, index: number): Promise<string> => {
  const res = await stack.api.post('/api/memories', {
    token: a.token,
    body: { content, metadata: { parent_ref: 'race', chunk_index: index } },
  });
  expect(res.status).toBe(201);
  return res.body.id;
};

describe('thread context embedded side by side', () => {
  it('mixes the later chunk with the earlier one whichever activity writes last', async () => {
    const [first, second] = [await save('Mia: Where are you moving next year?', 0), await save('Noah: Lisbon, in June.', 1)];
    // The first chunk's activity reads its thread, then waits in the model until the second's has written.
    let entered!: () => void;
    const inModel = new Promise<void>((resolve) => (entered = resolve));
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    const held: Embedder = {
      model: embedder.model,
      embedQueries: (texts, orgId) => embedder.embedQueries(texts, orgId),
      embedDocuments: async (texts, orgId) => {
        entered();
        await gate;
        return embedder.embedDocuments(texts, orgId);
      },
      close: async () => undefined,
    };
    const slow = embedMemories(stack.orm.em.fork(), held, a.org.id, [first]);
    await inModel;
    await embedMemories(stack.orm.em.fork(), embedder, a.org.id, [second]);
    release();
    await slow;

    const rows = await query(
      stack.orm.em.fork(),
      sql<{ memory_id: string; embedding: string; text_embedding: string | null }>`select memory_id, embedding::text as embedding,
          text_embedding::text as text_embedding from memory_embeddings where org_id = ${a.org.id} and passage = 0`,
    );
    const of = new Map(rows.map((r) => [r.memory_id, r]));
    const text = (id: string) => parseVector(of.get(id)!.text_embedding ?? of.get(id)!.embedding);
    const expected = withContext(text(second), [text(first)]);
    expect(parseVector(of.get(second)!.embedding).every((x, i) => Math.abs(x - expected[i]!) < 1e-5)).toBe(true);
  }, 60_000);
});
