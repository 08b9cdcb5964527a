import { describe, expect, it } from 'vitest';
import { carriedPending, takeNewest } from '../../workflows/curator/batches.ts';
import { BurstDetector } from '../../workflows/curator/burst.ts';
import { CURATOR_TUNING } from '../../workflows/curator/tuning.ts';

const detector = (sinceFirst = true) =>
  new BurstDetector({ burstPerSecond: 100, burstWindowMs: 2_000, burstOnsetMs: 500, relayIntervalMs: 250 }, sinceFirst);

describe('the burst detector', () => {
  it('sees no burst in a steady stream under the rate, however long', () => {
    const d = detector();
    // 50 ids a second, a signal every 250 ms, for a minute.
    for (let t = 0; t < 60_000; t += 250) {
      d.arrived(t, 12);
      expect(d.bursting(t), `at ${t} ms`).toBe(false);
    }
  });

  it('sees a burst once the window holds more than the rate allows, and its end once the window has passed', () => {
    // Without the third sign, as runs recorded before it replay: it would see this stream at its second signal.
    const d = detector(false);
    // 120 ids a second: the window fills past 200 ids within two seconds.
    let first = -1;
    for (let t = 0; t <= 3_000; t += 250) {
      d.arrived(t, 30);
      if (first < 0 && d.bursting(t)) first = t;
    }
    expect(first).toBeGreaterThan(500);
    expect(first).toBeLessThanOrEqual(2_000);
    expect(d.bursting(3_000 + 2_001)).toBe(false);
  });

  it('sees a stream a little over the rate at its second signal, and its end once the signals stop', () => {
    // 150 ids a second, a signal every 250 ms: under the onset's 200 a second, and 200 ids take the window 1.25 s.
    const d = detector();
    d.arrived(0, 38);
    expect(d.bursting(0)).toBe(false);
    d.arrived(250, 38);
    expect(d.bursting(250)).toBe(true);
    d.arrived(500, 38);
    expect(d.bursting(500 + 499)).toBe(true);
    // Over 500 ms since the last signal, with 114 ids in the window: the stream has stopped.
    expect(d.bursting(500 + 501)).toBe(false);
    const before = detector(false);
    before.arrived(0, 38);
    before.arrived(250, 38);
    expect(before.bursting(250)).toBe(false);
  });

  it('sees a burst at its onset from the latest signal alone, at twice the rate, while that signal is recent', () => {
    const d = detector();
    d.arrived(0, 2);
    // 82 ids 330 ms later: 248 a second, past 200.
    d.arrived(330, 82);
    expect(d.bursting(330)).toBe(true);
    expect(d.bursting(330 + 499)).toBe(true);
    expect(d.bursting(330 + 501)).toBe(false);
  });

  it('measures a first signal over the whole window and a late one over at least a relay interval', () => {
    const alone = detector();
    // 150 ids with nothing before: 75 a second over the window.
    alone.arrived(10_000, 150);
    expect(alone.bursting(10_000)).toBe(false);
    const quick = detector();
    quick.arrived(0, 10);
    // 60 ids 50 ms after the previous signal count over 250 ms: 240 a second.
    quick.arrived(50, 60);
    expect(quick.bursting(50)).toBe(true);
  });

  it('ignores signals that carry no ids', () => {
    const d = detector();
    d.arrived(0, 100);
    d.arrived(400, 0);
    // The latest arrival stays the one of 100 ids at 0, older than the onset window by now.
    expect(d.bursting(600)).toBe(false);
  });
});

describe("the curator's batches", () => {
  it('takes the newest ids first, at most a batch, out of the waiting ones', () => {
    const pending = new Set(['a', 'b', 'c', 'd', 'e']);
    expect(takeNewest(pending, 2)).toEqual(['e', 'd']);
    expect([...pending]).toEqual(['a', 'b', 'c']);
    expect(takeNewest(pending, 10)).toEqual(['c', 'b', 'a']);
    expect(pending.size).toBe(0);
  });

  it('hands over the waiting ids with the batches in flight last, so that the next run takes those first', () => {
    const carried = carriedPending(new Set(['a', 'b']), [
      ['d', 'c'],
      ['b', 'e'],
    ]);
    expect(carried).toEqual(['a', 'b', 'd', 'c', 'e']);
    const pending = new Set(carried);
    expect(takeNewest(pending, 3)).toEqual(['e', 'c', 'd']);
  });

  it('keeps within its own bounds with the shipped tuning', () => {
    expect(CURATOR_TUNING.burstLookAgainMs).toBeLessThan(CURATOR_TUNING.burstPauseMs);
    expect(CURATOR_TUNING.burstOnsetMs).toBeLessThan(CURATOR_TUNING.burstWindowMs);
    expect(CURATOR_TUNING.lanes).toBeGreaterThanOrEqual(1);
  });
});
