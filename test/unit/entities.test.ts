import { describe, expect, it } from 'vitest';
import { normalizeEntityName } from '../../domain/entities/normalize.ts';

describe('normalizeEntityName', () => {
  it('folds case, width and whitespace and drops a leading "the "', () => {
    expect(normalizeEntityName('The  PostgreSQL ')).toBe('postgresql');
    expect(normalizeEntityName('postgresql')).toBe('postgresql');
    expect(normalizeEntityName('ＰｏｓｔｇｒｅＳＱＬ')).toBe('postgresql');
    expect(normalizeEntityName('New\t\n York\u00a0City')).toBe('new york city');
    expect(normalizeEntityName('THE\u3000Beatles')).toBe('beatles');
  });

  it('strips surrounding quotes and punctuation, also around and after "the "', () => {
    expect(normalizeEntityName('"Kubernetes"')).toBe('kubernetes');
    expect(normalizeEntityName('“Kubernetes”,')).toBe('kubernetes');
    expect(normalizeEntityName("'the Beatles'")).toBe('beatles');
    expect(normalizeEntityName('The "Beatles".')).toBe('beatles');
    expect(normalizeEntityName('(Redis)')).toBe('redis');
    expect(normalizeEntityName('Acme Inc.')).toBe('acme inc');
  });

  it('keeps symbols that belong to names and unpaired inner brackets', () => {
    expect(normalizeEntityName('C#')).toBe('c#');
    expect(normalizeEntityName('C++')).toBe('c++');
    expect(normalizeEntityName('.NET')).toBe('.net');
    expect(normalizeEntityName('Node (runtime)')).toBe('node (runtime)');
    expect(normalizeEntityName("O'Reilly")).toBe("o'reilly");
  });

  it('keeps "the" inside or alone and yields empty for punctuation only', () => {
    expect(normalizeEntityName('Theano')).toBe('theano');
    expect(normalizeEntityName('Bring the Noise')).toBe('bring the noise');
    expect(normalizeEntityName('The')).toBe('the');
    expect(normalizeEntityName(' "..." ')).toBe('');
  });
});
