import { describe, expect, it } from 'vitest';
import { FairSlots } from '../../domain/fair-slots.ts';
import { OrgActivity } from '../../domain/org-activity.ts';
import { searchSlots } from '../../domain/search/search-slots.ts';

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

describe('FairSlots', () => {
  it('lets one org use every slot while no other waits', async () => {
    const slots = new FairSlots(2, 8, 32, 'searches');
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
    const slots = new FairSlots(2, 8, 32, 'searches', (org) => (org === 'a' ? share : 2));
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
    const activity = new OrgActivity();
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
});
