import { describe, expect, it } from 'vitest';
import { freshVectors } from '../../domain/search/fresh.ts';
import type { Embedder } from '../../domain/store/embedder.ts';

// An embedder that records what it was asked to embed: each text's vector is its length in the first place.
function recordingEmbedder(): Embedder & { asked: string[][] } {
  const asked: string[][] = [];
  const vectorOf = (text: string) => Float32Array.from({ length: 384 }, (_, i) => (i === 0 ? text.length : 0));
  return {
    model: 'recording',
    asked,
    embedDocuments: async (texts) => {
      asked.push(texts);
      return texts.map(vectorOf);
    },
    embedQueries: async (texts) => texts.map(vectorOf),
    close: async () => {},
  };
}

// While an org's backlog drains, each search by meaning embeds the newest waiting memories (fresh.ts): the same
// ones from one search to the next, so they are embedded once.
describe('fresh vectors', () => {
  it('embeds a waiting memory once across searches, again for another org or for edited text', async () => {
    const embedder = recordingEmbedder();
    const first = await freshVectors(embedder, 'org-a')!([{ id: 'm1', content: 'Deploys happen on Tuesdays' }]);
    expect(first.get('m1')![0]).toBe('Deploys happen on Tuesdays'.length);
    const again = await freshVectors(embedder, 'org-a')!([
      { id: 'm1', content: 'Deploys happen on Tuesdays' },
      { id: 'm2', content: 'The cat is called Pixel' },
    ]);
    expect([...again.keys()]).toEqual(['m1', 'm2']);
    expect(embedder.asked).toEqual([['Deploys happen on Tuesdays'], ['The cat is called Pixel']]);
    // Another org's memory of the same text is embedded for that org; an edited memory for its new text.
    await freshVectors(embedder, 'org-b')!([{ id: 'm9', content: 'Deploys happen on Tuesdays' }]);
    await freshVectors(embedder, 'org-a')!([{ id: 'm1', content: 'Deploys happen on Wednesdays' }]);
    expect(embedder.asked.slice(2)).toEqual([['Deploys happen on Tuesdays'], ['Deploys happen on Wednesdays']]);
  });

  it('keeps nothing from a failed pass', async () => {
    const embedder = recordingEmbedder();
    const failing = { ...embedder, embedDocuments: async () => Promise.reject(new Error('model down')) };
    expect((await freshVectors(failing, 'org-c')!([{ id: 'm1', content: 'Backups run nightly' }])).size).toBe(0);
    expect((await freshVectors(embedder, 'org-c')!([{ id: 'm1', content: 'Backups run nightly' }])).size).toBe(1);
    expect(embedder.asked).toEqual([['Backups run nightly']]);
  });
});
