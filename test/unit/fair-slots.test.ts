import { afterEach, describe, expect, it, vi } from 'vitest';
import { FairSlots, PACE_AHEAD_MAX_MS, WAIT_MAX_MS } from '../../domain/fair-slots.ts';
import { ACTIVE_LINGER_MS, OrgActivity } from '../../domain/org-activity.ts';
import { searchSlots } from '../../domain/search/search-slots.ts';
import { batchSlots } from '../../domain/memories/batch-slots.ts';

type Gated = ReturnType<typeof gated>;

// A call that runs until released, recording when it started.
function gated(started: string[], name: string) {
  let release!: () => void;
  const done = new Promise<void>((resolve) => (release = resolve));
  return {
    release,
    run: async () => {
      started.push(name);
      await done;
      return name;
    },
  };
}

const tick = () => new Promise((r) => setImmediate(r));

// Orgs here stop counting as active the moment their last request ends (a linger of 0), but in the linger's own test.
describe('FairSlots', () => {
  it('lets one org use every slot while no other waits', async () => {
    const slots = new FairSlots(2, 4, 16, 'searches');
    const started: string[] = [];
    const calls = ['a1', 'a2', 'a3'].map((name) => gated(started, name));
    const results = calls.map((c) => slots.run('a', c.run));
    await tick();
    expect(started).toEqual(['a1', 'a2']);
    calls[0]!.release();
    await tick();
    expect(started).toEqual(['a1', 'a2', 'a3']);
    for (const c of calls) c.release();
    expect(await Promise.all(results)).toEqual(['a1', 'a2', 'a3']);
  });

  it("serves an org that starts waiting behind another's flood next, ahead of the flood's line", async () => {
    const slots = new FairSlots(1, 8, 32, 'searches');
    const started: string[] = [];
    const flood = ['a1', 'a2', 'a3', 'a4', 'a5'].map((name) => gated(started, name));
    const results = flood.map((c) => slots.run('a', c.run));
    const quiet = gated(started, 'b1');
    results.push(slots.run('b', quiet.run));
    const after = gated(started, 'c1');
    results.push(slots.run('c', after.run));
    await tick();
    // a1 took the free slot; a2-a5 wait, and so do b1 and c1, which came later.
    expect(started).toEqual(['a1']);
    for (const c of [flood[0]!, quiet, flood[1]!, after, ...flood.slice(2)]) {
      c.release();
      await tick();
    }
    // a1's slot went to b, not to a, whose call had just ended; b1's to a, first in turn among a and c, then c;
    // then the rest of a's line in order.
    expect(started).toEqual(['a1', 'b1', 'a2', 'c1', 'a3', 'a4', 'a5']);
    await Promise.all(results);
  });

  it("refuses an org's call past its own queue with 429, while other orgs still wait their turn", async () => {
    const slots = new FairSlots(1, 2, 4, 'searches');
    const started: string[] = [];
    const held = gated(started, 'a1');
    const pending = [slots.run('a', held.run), slots.run('a', async () => 'a2'), slots.run('a', async () => 'a3')];
    await expect(slots.run('a', async () => 'a4')).rejects.toMatchObject({
      kind: 'rate_limited',
      error: 'rate-limited',
      extra: { retry_after: 1 },
    });
    pending.push(
      slots.run('b', async () => 'b1'),
      slots.run('b', async () => 'b2'),
    );
    // Four wait in all: a fifth, of any org, finds this process behind (503).
    await expect(slots.run('c', async () => 'c1')).rejects.toMatchObject({ kind: 'unavailable', error: 'server_busy' });
    held.release();
    expect(await Promise.all(pending)).toEqual(['a1', 'a2', 'a3', 'b1', 'b2']);
    // Once drained, every org is served at once again.
    expect(await slots.run('c', async () => 'c1')).toBe('c1');
  });

  it('frees the slot of a call that fails', async () => {
    const slots = new FairSlots(1, 8, 32, 'searches');
    await expect(slots.run('a', async () => Promise.reject(new Error('boom')))).rejects.toThrow('boom');
    expect(await slots.run('a', async () => 'next')).toBe('next');
  });

  it('holds an org to its share, leaving a free slot to other orgs, and lets it use every slot again after', async () => {
    let share = 1;
    const slots = new FairSlots(2, 4, 16, 'searches', { slotsFor: (org) => (org === 'a' ? share : 2), paced: () => false, share: 1 });
    const started: string[] = [];
    const [a1, a2, a3, b1] = ['a1', 'a2', 'a3', 'b1'].map((name) => gated(started, name)) as [Gated, Gated, Gated, Gated];
    const results = [slots.run('a', a1.run), slots.run('a', a2.run)];
    await tick();
    // a2 waits beside a free slot; b1 takes it at once.
    expect(started).toEqual(['a1']);
    results.push(slots.run('b', b1.run));
    await tick();
    expect(started).toEqual(['a1', 'b1']);
    a1.release();
    await tick();
    expect(started).toEqual(['a1', 'b1', 'a2']);
    share = 2;
    results.push(slots.run('a', a3.run));
    b1.release();
    await tick();
    expect(started).toEqual(['a1', 'b1', 'a2', 'a3']);
    for (const c of [a2, a3]) c.release();
    expect(await Promise.all(results)).toEqual(['a1', 'a2', 'b1', 'a3']);
  });

  it("gives the search slots to an org alone, and all but one while another org's request is under way", async () => {
    const activity = new OrgActivity(0);
    const slots = searchSlots(2, activity);
    const started: string[] = [];
    const calls = ['a1', 'a2', 'a3', 'a4'].map((name) => gated(started, name));
    const leaveA = activity.enter('a');
    const results = [slots.run('a', calls[0]!.run), slots.run('a', calls[1]!.run)];
    await tick();
    expect(started).toEqual(['a1', 'a2']);
    // Another org's save begins: with a2 under way, a's next searches wait beside the slot a1 freed.
    const leaveB = activity.enter('b');
    calls[0]!.release();
    await tick();
    results.push(slots.run('a', calls[2]!.run), slots.run('a', calls[3]!.run));
    await tick();
    expect(started).toEqual(['a1', 'a2']);
    // The save ends (leaving twice counts once); when a2 ends, a takes both slots again.
    leaveB();
    leaveB();
    calls[1]!.release();
    await tick();
    expect(started).toEqual(['a1', 'a2', 'a3', 'a4']);
    for (const c of calls.slice(2)) c.release();
    expect(await Promise.all(results)).toEqual(['a1', 'a2', 'a3', 'a4']);
    leaveA();
    expect(activity.othersActive('a')).toBe(false);
    expect(activity.othersActive('c')).toBe(false);
  });

  describe('pacing an org whose searches wait', () => {
    afterEach(() => vi.useRealTimers());
    // Time moves only when a test says so: the pacing is read from performance.now() and woken by a timer.
    const clock = () => vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'performance'] });
    const advance = async (ms: number) => {
      await tick();
      vi.advanceTimersByTime(ms);
      await tick();
    };

    it.each([
      ['searches', searchSlots],
      ['batch writes', batchSlots],
    ])('holds its waiting %s to the share of the slots while another org with none waiting is busy', async (_, slotsOf) => {
      clock();
      const activity = new OrgActivity(0);
      // A quarter of two slots' time: each call's time in its slot puts off the next by twice that.
      const slots = slotsOf(2, activity, 0.25);
      const started: string[] = [];
      const [a1, a2, a3, b1] = ['a1', 'a2', 'a3', 'b1'].map((name) => gated(started, name)) as [Gated, Gated, Gated, Gated];
      const leaveA = activity.enter('a');
      const leaveB = activity.enter('b');
      const results = [slots.run('a', a1.run), slots.run('a', a2.run), slots.run('a', a3.run)];
      await tick();
      expect(started).toEqual(['a1']);
      await advance(20);
      a1.release();
      await tick();
      // a1 held its slot 20 ms: a2 may start 40 ms after a1 started, though both slots are free.
      expect(started).toEqual(['a1']);
      // The other org's search is not held back: it waits for nothing of its own.
      results.push(slots.run('b', b1.run));
      await tick();
      expect(started).toEqual(['a1', 'b1']);
      await advance(19);
      expect(started).toEqual(['a1', 'b1']);
      await advance(1);
      expect(started).toEqual(['a1', 'b1', 'a2']);
      // Once the other org is done, a is paced no more: a3 starts as soon as a2 ends.
      b1.release();
      leaveB();
      await advance(30);
      a2.release();
      await tick();
      expect(started).toEqual(['a1', 'b1', 'a2', 'a3']);
      a3.release();
      expect(await Promise.all(results)).toEqual(['a1', 'a2', 'a3', 'b1']);
      leaveA();
    });

    it(`refuses a call with 429 and the wait while its org's pace runs more than ${PACE_AHEAD_MAX_MS} ms ahead`, async () => {
      clock();
      const activity = new OrgActivity(0);
      // A tenth of two slots' time: each call's time in its slot puts off the next by five times that.
      const slots = searchSlots(2, activity, 0.1);
      const started: string[] = [];
      const [a1, a2, a4] = ['a1', 'a2', 'a4'].map((name) => gated(started, name)) as [Gated, Gated, Gated];
      const [leaveA, leaveB] = [activity.enter('a'), activity.enter('b')];
      const results = [slots.run('a', a1.run), slots.run('a', a2.run)];
      await advance(600);
      a1.release();
      await tick();
      // a1 held its slot 600 ms: a2 may start 3,000 ms after a1 started, 2,400 ms from now.
      const refused: unknown = await slots.run('a', async () => 'a3').catch((err: unknown) => err);
      expect(refused).toMatchObject({ error: 'rate-limited', extra: { retry_after: 3 } });
      expect(started).toEqual(['a1']);
      // Once the other org is done, the pace binds no more.
      leaveB();
      results.push(slots.run('a', a4.run));
      await tick();
      expect(started).toEqual(['a1', 'a2', 'a4']);
      a2.release();
      a4.release();
      expect(await Promise.all(results)).toEqual(['a1', 'a2', 'a4']);
      leaveA();
    });

    it('holds a call back until its pace ends though nothing of its org waits (a flood back from its Retry-After)', async () => {
      clock();
      const activity = new OrgActivity(0);
      const slots = searchSlots(2, activity, 0.1);
      const started: string[] = [];
      const a1 = gated(started, 'a1');
      const [leaveA, leaveB] = [activity.enter('a'), activity.enter('b')];
      // The model spent 100 ms on a's questions: a's next search may start 500 ms from now, a slot free or not.
      slots.charge('a', 100);
      const result = slots.run('a', a1.run);
      await advance(499);
      expect(started).toEqual([]);
      await advance(1);
      expect(started).toEqual(['a1']);
      a1.release();
      expect(await result).toBe('a1');
      leaveA();
      leaveB();
    });

    it(`refuses a call still waiting after ${WAIT_MAX_MS} ms: a paced org's with 429 and its pace, another's with 503`, async () => {
      clock();
      const activity = new OrgActivity(0);
      const slots = searchSlots(2, activity, 0.1);
      const started: string[] = [];
      const [a1, a2, b1] = ['a1', 'a2', 'b1'].map((name) => gated(started, name)) as [Gated, Gated, Gated];
      const [leaveA, leaveB] = [activity.enter('a'), activity.enter('b')];
      const results = [slots.run('a', a1.run), slots.run('a', a2.run)];
      const [a3, a4] = ['a3', 'a4'].map((name) => slots.run('a', async () => name).catch((err: unknown) => err));
      // a takes all slots but one; a2, a3 and a4 wait. a1 holds its slot 300 ms: a2 may start 1,500 ms after a1 did.
      await advance(300);
      a1.release();
      await advance(1_200);
      expect(started).toEqual(['a1', 'a2']);
      // a2 holds its slot 1,000 ms: the calls behind it are put off to 6,500 ms, past the wait's deadline at 5,000 ms.
      await advance(1_000);
      a2.release();
      await advance(WAIT_MAX_MS - 2_500);
      expect(await a3).toMatchObject({ error: 'rate-limited', extra: { retry_after: 2 } });
      expect(await a4).toMatchObject({ error: 'rate-limited', extra: { retry_after: 2 } });
      // With a's line empty, another org's call starts at once.
      results.push(slots.run('b', b1.run));
      await tick();
      expect(started).toEqual(['a1', 'a2', 'b1']);
      // An org that is not paced waits for a slot that others hold, and past the deadline is told the process is behind.
      leaveA();
      const held = gated(started, 'b2');
      results.push(slots.run('b', held.run));
      const c1 = slots.run('c', async () => 'c1').catch((err: unknown) => err);
      await tick();
      expect(started).toEqual(['a1', 'a2', 'b1', 'b2']);
      await advance(WAIT_MAX_MS);
      expect(await c1).toMatchObject({ error: 'server_busy', extra: { retry_after: 1 } });
      b1.release();
      held.release();
      expect(await Promise.all(results)).toEqual(['a1', 'a2', 'b1', 'b2']);
      leaveB();
    });

    it("counts the model's time for a bulk search's questions as the org's slot time", async () => {
      clock();
      const activity = new OrgActivity(0);
      const slots = searchSlots(2, activity, 0.25);
      const started: string[] = [];
      const [a1, a2] = ['a1', 'a2'].map((name) => gated(started, name)) as [Gated, Gated];
      const [leaveA, leaveB] = [activity.enter('a'), activity.enter('b')];
      const results = [slots.run('a', a1.run), slots.run('a', a2.run)];
      // The model spent 10 ms on a's questions, and a1 holds its slot 5 ms: a2 starts (10 + 5) × 2 ms after.
      slots.charge('a', 10);
      await advance(5);
      a1.release();
      await advance(24);
      expect(started).toEqual(['a1']);
      await advance(1);
      expect(started).toEqual(['a1', 'a2']);
      a2.release();
      expect(await Promise.all(results)).toEqual(['a1', 'a2']);
      leaveA();
      leaveB();
    });

    it("paces an org by its time in the search slots and the batch slots together", async () => {
      clock();
      const activity = new OrgActivity(0);
      const [searches, batches] = [searchSlots(2, activity, 0.25), batchSlots(2, activity, 0.25)];
      const started: string[] = [];
      const [s1, s2, b1, b2] = ['s1', 's2', 'b1', 'b2'].map((name) => gated(started, name)) as [Gated, Gated, Gated, Gated];
      const [leaveA, leaveB] = [activity.enter('a'), activity.enter('b')];
      const results = [searches.run('a', s1.run), searches.run('a', s2.run), batches.run('a', b1.run), batches.run('a', b2.run)];
      await tick();
      expect(started).toEqual(['s1', 'b1']);
      // Each held its slot 20 ms: the batch puts a's pace 40 ms on, and the search another 40 ms after that.
      await advance(20);
      b1.release();
      s1.release();
      await advance(59);
      expect(started).toEqual(['s1', 'b1']);
      await advance(1);
      expect(started).toEqual(['s1', 'b1', 's2', 'b2']);
      s2.release();
      b2.release();
      expect(await Promise.all(results)).toEqual(['s1', 's2', 'b1', 'b2']);
      leaveA();
      leaveB();
    });

    it(`counts an org as active for ${ACTIVE_LINGER_MS} ms after its last request ended`, async () => {
      clock();
      const activity = new OrgActivity();
      const slots = searchSlots(2, activity);
      const started: string[] = [];
      const [a1, a2, a3] = ['a1', 'a2', 'a3'].map((name) => gated(started, name)) as [Gated, Gated, Gated];
      activity.enter('b')();
      // b's request has just ended: a's searches still leave it a slot.
      const results = [slots.run('a', a1.run), slots.run('a', a2.run)];
      await tick();
      expect(started).toEqual(['a1']);
      expect(activity.othersActive('a')).toBe(true);
      await advance(ACTIVE_LINGER_MS - 1);
      expect(activity.othersActive('a')).toBe(true);
      // Past the linger a takes both slots: its next call finds a2 started and waits for one itself.
      await advance(1);
      expect(activity.othersActive('a')).toBe(false);
      results.push(slots.run('a', a3.run));
      await tick();
      expect(started).toEqual(['a1', 'a2']);
      for (const c of [a1, a2, a3]) c.release();
      expect(await Promise.all(results)).toEqual(['a1', 'a2', 'a3']);
    });

    it('leaves orgs unpaced when every busy org has searches waiting', async () => {
      clock();
      const activity = new OrgActivity(0);
      const slots = searchSlots(2, activity, 0.25);
      const started: string[] = [];
      const calls = ['a1', 'b1', 'a2', 'b2'].map((name) => gated(started, name)) as [Gated, Gated, Gated, Gated];
      const [leaveA, leaveB] = [activity.enter('a'), activity.enter('b')];
      const results = calls.map((c) => slots.run(c === calls[0] || c === calls[2] ? 'a' : 'b', c.run));
      await tick();
      expect(started).toEqual(['a1', 'b1']);
      await advance(20);
      calls[0].release();
      await tick();
      // Both floods wait for a slot, so neither is held to a share: a2 takes the freed slot at once.
      expect(started).toEqual(['a1', 'b1', 'a2']);
      // With a's line empty, b's waiting search is paced in turn.
      for (const c of calls.slice(1)) c.release();
      await advance(40);
      expect(await Promise.all(results)).toEqual(['a1', 'b1', 'a2', 'b2']);
      leaveA();
      leaveB();
    });
  });
});

describe('OrgActivity.takeSeen', () => {
  it('gives the orgs under way and those that came and went since the last take, each once', () => {
    const activity = new OrgActivity(0);
    // Before the first take nothing is kept but what is under way.
    activity.enter('before')();
    const stays = activity.enter('stays');
    expect(activity.takeSeen()).toEqual(['stays']);
    const leaveA = activity.enter('a');
    activity.enter('a')();
    leaveA();
    activity.enter('b')();
    expect(activity.takeSeen().sort()).toEqual(['a', 'b', 'stays']);
    stays();
    expect(activity.takeSeen()).toEqual([]);
  });
});
