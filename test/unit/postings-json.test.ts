import { describe, expect, it } from 'vitest';
import { termFrequencies } from '../../domain/store/analyzer.ts';
import { tfsJson } from '../../domain/store/postings.ts';

// A staged memory's {term: tf} is written out as JSON text by hand (postings.ts); PostgreSQL parses it as jsonb.
describe('tfsJson', () => {
  it('writes what JSON.parse reads back as the same terms and tfs, whatever the characters of a term', () => {
    const terms = new Map<string, number>([
      ['deploi', 2],
      ['"quoted"', 1],
      ['back\\slash', 3],
      ['\u00e9t\u00e9', 1],
      ['__proto__', 4],
      ['\u2028', 1],
    ]);
    expect(new Map(Object.entries(JSON.parse(tfsJson(terms))))).toEqual(terms);
  });

  it('writes an empty object for a memory without terms, and the analyzer terms of a real text', () => {
    expect(tfsJson(new Map())).toBe('{}');
    const analyzed = termFrequencies('Deploys to production happen on Tuesdays; deploys never on Fridays.');
    expect(new Map(Object.entries(JSON.parse(tfsJson(analyzed.terms))))).toEqual(analyzed.terms);
  });
});
