import { describe, expect, it } from 'vitest';
import { OFF_THREAD_CHARS, redactOffThread } from '../../domain/memories/redaction/off-thread.ts';
import { redactSecrets } from '../../domain/memories/redaction/redact.ts';

// A long paste with a credential in the middle, as agents save a config file or a log.
const GITHUB_TOKEN = 'ghp_' + 'a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8';
const prose = 'The deploy of the billing service ran at noon; the cache warmed in four minutes and the queue drained. ';
const longPaste = prose.repeat(1_500) + `export GITHUB_TOKEN=${GITHUB_TOKEN}\n` + prose.repeat(1_000);

describe('redaction off the event loop', () => {
  it('redacts a long text on a thread, the same as on the event loop, while timers keep running', async () => {
    expect(longPaste.length).toBeGreaterThan(OFF_THREAD_CHARS);
    let ticks = 0;
    const timer = setInterval(() => ticks++, 1);
    const result = await redactOffThread(longPaste, 'org-a');
    clearInterval(timer);
    // On the event loop the work would run to its end before any timer could fire.
    expect(ticks).toBeGreaterThan(0);
    expect(result).toEqual(redactSecrets(longPaste));
    expect(result.text).not.toContain(GITHUB_TOKEN);
    expect(result.count).toBe(1);
  });

  it('redacts a short text at once, in the caller', async () => {
    const short = `token ${GITHUB_TOKEN}`;
    let ticks = 0;
    const timer = setInterval(() => ticks++, 0);
    const result = await redactOffThread(short, 'org-a');
    clearInterval(timer);
    expect(ticks).toBe(0);
    expect(result).toEqual(redactSecrets(short));
  });

  it("answers many orgs' long texts, each its own", async () => {
    const texts = Array.from({ length: 6 }, (_, i) => `org ${i} ` + longPaste);
    const results = await Promise.all(texts.map((text, i) => redactOffThread(text, `org-${i % 3}`)));
    results.forEach((r, i) => expect(r.text.startsWith(`org ${i} `)).toBe(true));
    expect(results.every((r) => r.count === 1)).toBe(true);
  });
});
