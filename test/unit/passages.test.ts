import { describe, expect, it } from 'vitest';
import { LONG_TEXT_CHARS, MAX_PASSAGES, PASSAGE_CHARS, PASSAGE_OVERLAP, passagesOf } from '../../domain/store/passages.ts';

const paragraph = (i: number) => `Paragraph ${i} says something of its own. `.repeat(8).trim();

describe('passagesOf', () => {
  it('leaves a text of at most LONG_TEXT_CHARS whole', () => {
    expect(passagesOf('short note')).toEqual([]);
    expect(passagesOf('x '.repeat(LONG_TEXT_CHARS / 2))).toEqual([]);
  });

  it('covers a long text in overlapping windows that end where paragraphs end', () => {
    const text = Array.from({ length: 12 }, (_, i) => paragraph(i)).join('\n\n');
    const passages = passagesOf(text).map((p) => p.text);
    expect(passages.length).toBeGreaterThan(text.length / PASSAGE_CHARS);
    for (const p of passages) expect(p.length).toBeLessThanOrEqual(PASSAGE_CHARS);
    // Every paragraph is whole in some passage, and each passage but the last ends at a paragraph's end.
    for (let i = 0; i < 12; i++) expect(passages.some((p) => p.includes(paragraph(i)))).toBe(true);
    for (const p of passages.slice(0, -1)) expect(p.endsWith('.')).toBe(true);
    // Windows overlap: each starts inside the one before it, where a sentence starts.
    for (let i = 1; i < passages.length; i++) {
      expect(passages[i - 1]!.includes(passages[i]!.slice(0, 40))).toBe(true);
      expect(passages[i]).toMatch(/^Paragraph \d+ says/);
    }
    expect(passages.at(-1)!.endsWith(paragraph(11))).toBe(true);
  });

  it('cuts a text without breaks at the window size, and words at a space', () => {
    const blob = 'a'.repeat(3000);
    const passages = passagesOf(blob).map((p) => p.text);
    expect(passages[0]).toHaveLength(PASSAGE_CHARS);
    expect(passages.join('').length).toBeGreaterThanOrEqual(3000);
    const words = Array.from({ length: 600 }, (_, i) => `word${i}`).join(' ');
    for (const p of passagesOf(words)) expect(p.text).toMatch(/^word\d+( word\d+)*$/);
    expect(passagesOf(words)[1]!.text.length).toBeGreaterThan(PASSAGE_OVERLAP);
  });

  it("gives each passage's place in the text", () => {
    const text = Array.from({ length: 12 }, (_, i) => `  ${paragraph(i)}  `).join('\n\n');
    for (const p of passagesOf(text)) {
      expect(text.slice(p.start, p.end)).toBe(p.text);
      expect(p.text).toBe(p.text.trim());
    }
  });

  it('stops at MAX_PASSAGES', () => {
    expect(passagesOf('Another sentence here. '.repeat(20_000))).toHaveLength(MAX_PASSAGES);
  });
});
