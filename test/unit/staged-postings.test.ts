import { describe, expect, it } from 'vitest';
import { termFrequencies } from '../../domain/store/analyzer.ts';
import { postingsByTerm, type StagedMemory } from '../../domain/search/staged-postings.ts';

// jsonb's text form of a staged row, as PostgreSQL prints it: keys by length then bytes, ", " and ": " between.
const jsonbText = (terms: Map<string, number>): string =>
  `{${[...terms]
    .sort(([a], [b]) => a.length - b.length || (a < b ? -1 : 1))
    .map(([term, tf]) => `${JSON.stringify(term)}: ${tf}`)
    .join(', ')}}`;

// What the fold built before: each term's postings pushed in the memories' order.
function reference(memories: StagedMemory[]): Map<string, { docnums: number[]; lens: number[]; tfs: number[] }> {
  const byTerm = new Map<string, { docnums: number[]; lens: number[]; tfs: number[] }>();
  for (const m of memories)
    for (const [term, tf] of Object.entries(JSON.parse(m.tfs) as Record<string, number>)) {
      let p = byTerm.get(term);
      if (!p) byTerm.set(term, (p = { docnums: [], lens: [], tfs: [] }));
      p.docnums.push(m.docnum);
      p.lens.push(m.docLen);
      p.tfs.push(tf);
    }
  return byTerm;
}

const plainArrays = (byTerm: ReturnType<typeof postingsByTerm>) =>
  new Map([...byTerm].map(([term, p]) => [term, { docnums: [...p.docnums], lens: [...p.lens], tfs: [...p.tfs] }]));

describe('postingsByTerm', () => {
  it("gives each term its postings in the memories' order, as pushing them one by one did", () => {
    const texts = [
      'Deploys to production happen on Tuesdays; deploys never on Fridays.',
      'The staging deploy failed on Tuesday because the database migration timed out.',
      'Priya owns the billing service; Omar owns deploys and the on-call rota.',
      '',
      'été 東京 naïve café café café',
    ];
    const memories = texts.map((text, i) => {
      const analyzed = termFrequencies(text);
      return { docnum: 40 + 3 * i, docLen: analyzed.length, tfs: jsonbText(analyzed.terms) };
    });
    expect(plainArrays(postingsByTerm(memories))).toEqual(reference(memories));
    expect(postingsByTerm(memories).get('deploi')?.docnums).toEqual(new Int32Array([40, 43, 46]));
  });

  it('reads tfs of several digits, and text jsonb would print escaped or spaced otherwise, through JSON.parse', () => {
    const memories = [
      { docnum: 1, docLen: 900, tfs: '{"a": 300, "bb": 12}' },
      { docnum: 2, docLen: 5, tfs: '{"a\\"b": 1, "a": 2}' },
      { docnum: 3, docLen: 7, tfs: '{"a":1,"bb":4}' },
      { docnum: 4, docLen: 1, tfs: '{}' },
      { docnum: 5, docLen: 2, tfs: '{"x\\\\": 1, "bb": 1}' },
    ];
    expect(plainArrays(postingsByTerm(memories))).toEqual(reference(memories));
    expect([...postingsByTerm(memories).get('a')!.tfs]).toEqual([300, 2, 1]);
  });
});
