import { describe, expect, it } from 'vitest';
import { ANALYZER_VERSION, MAX_TERM_LENGTH, QUESTION_STOP_WORDS, analyze, termFrequencies } from '../../domain/store/analyzer.ts';

const LUCENE_STOP_WORDS =
  'a an and are as at be but by for if in into is it no not of on or such that the their then there these they this to was will with';

describe('analyze', () => {
  it('splits on anything that is not a letter or digit', () => {
    expect(analyze('hello, world! (foo) [bar] {baz} qux;quux — a/b\tc\nd_e-f')).toEqual([
      'hello',
      'world',
      'foo',
      'bar',
      'baz',
      'qux',
      'quux',
      'b',
      'c',
      'd',
      'e',
      'f',
    ]);
    expect(analyze('')).toEqual([]);
    expect(analyze('  ... !!! ')).toEqual([]);
  });

  it("drops the words that only make a question when given hybrid search's set, and keeps them otherwise", () => {
    const question = 'When did Caroline go to the support group, and why would she?';
    expect(analyze(question, QUESTION_STOP_WORDS)).toEqual(['carolin', 'go', 'support', 'group', 'she']);
    expect(analyze(question)).toEqual(['when', 'did', 'carolin', 'go', 'support', 'group', 'why', 'would', 'she']);
    for (const word of LUCENE_STOP_WORDS.split(' ')) expect(QUESTION_STOP_WORDS.has(word)).toBe(true);
  });

  it('folds case', () => {
    expect(analyze('HELLO Hello hElLo')).toEqual(['hello', 'hello', 'hello']);
    expect(analyze('ΟΔΟΣ')).toEqual(['οδος']);
  });

  it('keeps digits, splitting dotted numbers', () => {
    expect(analyze('version 2.0.1 shipped in 2024 on port 8080')).toEqual(['version', '2', '0', '1', 'ship', '2024', 'port', '8080']);
    expect(analyze('abc123 1990s')).toEqual(['abc123', '1990']);
  });

  it("drops possessive 's and splits other apostrophes", () => {
    expect(analyze("John's cat’s toy")).toEqual(['john', 'cat', 'toi']);
    expect(analyze("don't")).toEqual(['don', 't']);
    expect(analyze('don\u2019t John\u02BCs don\u02BCt')).toEqual(['don', 't', 'john', 'don', 't']);
    expect(analyze("the students' books, O'Brien")).toEqual(['student', 'book', 'o', 'brien']);
    expect(analyze("it's")).toEqual([]);
    expect(analyze("rock'sand")).toEqual(['rock', 'sand']);
  });

  it("removes Lucene's 33 English stop words, whatever their case", () => {
    expect(LUCENE_STOP_WORDS.split(' ')).toHaveLength(33);
    expect(analyze(LUCENE_STOP_WORDS)).toEqual([]);
    expect(analyze(LUCENE_STOP_WORDS.toUpperCase())).toEqual([]);
    expect(analyze('To be or not to be, that is the question')).toEqual(['question']);
  });

  it('Porter-stems', () => {
    const stems: [string, string][] = [
      ['running', 'run'],
      ['connections', 'connect'],
      ['connected', 'connect'],
      ['generously', 'gener'],
      ['relational', 'relat'],
      ['happiness', 'happi'],
      ['caresses', 'caress'],
      ['ponies', 'poni'],
      ['memories', 'memori'],
      ['memory', 'memori'],
      ['agreed', 'agre'],
      ['hopping', 'hop'],
      ['sky', 'sky'],
    ];
    for (const [word, stem] of stems) expect(analyze(word), word).toEqual([stem]);
  });

  it('normalizes with NFKC', () => {
    expect(analyze('ﬁle ＦＵＬＬ ①')).toEqual(['file', 'full', '1']);
    expect(analyze('cafe\u0301')).toEqual(analyze('caf\u00e9'));
  });

  it('keeps non-Latin words whole, but splits Han and Hiragana into characters', () => {
    expect(analyze('Привет мир')).toEqual(['привет', 'мир']);
    expect(analyze('नमस्ते दुनिया')).toEqual(['नमस्ते', 'दुनिया']);
    expect(analyze('東京タワーに行きました')).toEqual(['東', '京', 'タワー', 'に', '行', 'き', 'ま', 'し', 'た']);
  });

  it('drops tokens longer than MAX_TERM_LENGTH', () => {
    const sha1 = 'da39a3ee5e6b4b0d3255bfef95601890afd80709';
    const sha256 = 'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855';
    expect(sha1).toHaveLength(MAX_TERM_LENGTH);
    expect(analyze(`commit ${sha1} digest ${sha256} end`)).toEqual(['commit', sha1, 'digest', 'end']);
    expect(analyze('x'.repeat(MAX_TERM_LENGTH + 1))).toEqual([]);
  });

  it('analyzes documents and queries alike', () => {
    const doc = termFrequencies('The CONNECTION was running; connections run.');
    for (const term of analyze('connect RUNS')) expect(doc.terms.has(term), term).toBe(true);
  });

  it('is deterministic', () => {
    const text = "Agents' memories: Don't forget the 2nd deployment's logs!";
    expect(analyze(text)).toEqual(analyze(text));
  });

  it('handles 256 KB inputs quickly, including a single giant token', () => {
    const words = ['alpha', 'beta', 'gamma', "delta's", 'running', '42', 'the', 'connections'];
    let text = '';
    for (let i = 0; text.length < 256 * 1024; i++) text += `${words[(i * 7) % words.length]} `;
    const started = performance.now();
    const terms = analyze(text);
    expect(terms.length).toBeGreaterThan(30_000);
    expect(analyze('y'.repeat(256 * 1024))).toEqual([]);
    expect(new Set(analyze("'s".repeat(128 * 1024)))).toEqual(new Set(['s']));
    expect(performance.now() - started).toBeLessThan(2_000);
  });
});

describe('termFrequencies', () => {
  it('counts terms and uses the number of kept tokens as the length', () => {
    const { terms, length } = termFrequencies('The cat and the cats; a CAT!');
    expect(terms).toEqual(new Map([['cat', 3]]));
    expect(length).toBe(3);
    expect(termFrequencies('the of and')).toEqual({ terms: new Map(), length: 0 });
  });

  it('has a version to store with postings', () => {
    expect(ANALYZER_VERSION).toBe(1);
  });
});
