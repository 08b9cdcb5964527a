import { describe, expect, it } from 'vitest';
import type { Embedder } from '../../domain/store/embedder.ts';
import { AppError } from '../../domain/errors.ts';
import { QueryVectors } from '../../domain/search/query-vectors.ts';

// The cache's own rules, with an embedder that records what it is asked (the model and the provider are exercised
// through the API in test/integration/semantic-failures.test.ts).
function recordingEmbedder(model = 'm') {
  const asked: string[][] = [];
  const owners: (string | undefined)[] = [];
  let failing = false;
  const embedder: Embedder = {
    model,
    embedDocuments: () => Promise.reject(new Error('not for queries')),
    embedQueries: async (texts, orgId) => {
      asked.push(texts);
      owners.push(orgId);
      if (failing) throw new Error('model crashed');
      return texts.map((text) => Float32Array.of(text.length, 1));
    },
    close: async () => undefined,
  };
  return { embedder, asked, owners, fail: (on: boolean) => (failing = on) };
}

describe('query vectors', () => {
  it('keeps the latest queries of each org, least recently asked evicted first', async () => {
    const { embedder, asked, owners } = recordingEmbedder();
    const served: string[] = [];
    const vectors = new QueryVectors(embedder, 2, (source, count) => served.push(`${source} ${count}`));
    for (const text of ['a', 'bb', 'a', 'ccc', 'bb']) await vectors.of('org-1', [text]);
    // 'a' was asked again before 'ccc' came, so 'bb' was the one evicted.
    expect(asked).toEqual([['a'], ['bb'], ['ccc'], ['bb']]);
    await vectors.of('org-2', ['a']);
    expect(asked.at(-1)).toEqual(['a']);
    // Each call is the asking org's, so that a model shared by the orgs takes it in that org's turn.
    expect(owners).toEqual(['org-1', 'org-1', 'org-1', 'org-1', 'org-2']);
    expect(served.filter((s) => s.startsWith('cache') && s !== 'cache 0')).toEqual(['cache 1']);
  });

  it('embeds a text asked twice in one call once, and answers in the order asked', async () => {
    const { embedder, asked } = recordingEmbedder();
    const vectors = new QueryVectors(embedder, 10);
    await vectors.of('org', ['kept']);
    const answer = await vectors.of('org', ['new', 'kept', 'new', 'longer one']);
    expect(asked.at(-1)).toEqual(['new', 'longer one']);
    expect(answer.map((v) => v.vector[0])).toEqual([3, 4, 3, 10]);
    expect(answer.every((v) => v.model === 'm')).toBe(true);
  });

  it('keeps nothing at size 0, and nothing of a failed call', async () => {
    const { embedder, asked, fail } = recordingEmbedder();
    const none = new QueryVectors(embedder, 0);
    await none.of('org', ['a']);
    await none.of('org', ['a']);
    expect(asked).toHaveLength(2);

    const vectors = new QueryVectors(embedder, 10);
    fail(true);
    const failed = await vectors.of('org', ['b']).catch((err: unknown) => err);
    expect(failed).toBeInstanceOf(AppError);
    expect((failed as AppError).error).toBe('embeddings_unavailable');
    fail(false);
    await vectors.of('org', ['b']);
    expect(asked.slice(2)).toEqual([['b'], ['b']]);
  });

  it('answers 503 without a model', async () => {
    const failed = await new QueryVectors(null, 10).of('org', ['a']).catch((err: unknown) => err);
    expect((failed as AppError).error).toBe('embeddings_unavailable');
  });
});
