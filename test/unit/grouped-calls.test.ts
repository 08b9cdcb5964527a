import { describe, expect, it } from 'vitest';
import { GroupedCalls } from '../../domain/grouped-calls.ts';

// A `run` that answers each input doubled, or refuses odd ones, and records the groups it was given; each group
// waits for `release` so that the test decides when the statements in flight end.
function recorder(refuseOdd = false) {
  const groups: number[][] = [];
  const releases: (() => void)[] = [];
  const run = async (inputs: number[]): Promise<PromiseSettledResult<number>[]> => {
    groups.push(inputs);
    await new Promise<void>((resolve) => releases.push(resolve));
    return inputs.map((n) => (refuseOdd && n % 2 === 1 ? { status: 'rejected', reason: new Error(`odd ${n}`) } : { status: 'fulfilled', value: n * 2 }));
  };
  return { groups, run, releaseAll: () => releases.splice(0).forEach((release) => release()) };
}

const tick = () => new Promise((resolve) => setImmediate(resolve));

describe('GroupedCalls', () => {
  it('runs a call at once when a slot is free, and groups the calls that queue meanwhile', async () => {
    const { groups, run, releaseAll } = recorder();
    const calls = new GroupedCalls(run, 1, 3);
    const first = calls.call(1);
    const queued = [2, 3, 4, 5, 6].map((n) => calls.call(n));
    expect(groups).toEqual([[1]]);
    releaseAll();
    await tick();
    // The five that queued behind the first go as groups of at most three, one in flight at a time.
    expect(groups).toEqual([[1], [2, 3, 4]]);
    releaseAll();
    await tick();
    expect(groups).toEqual([[1], [2, 3, 4], [5, 6]]);
    releaseAll();
    expect(await Promise.all([first, ...queued])).toEqual([2, 4, 6, 8, 10, 12]);
  });

  it('keeps as many groups in flight as allowed', async () => {
    const { groups, run, releaseAll } = recorder();
    const calls = new GroupedCalls(run, 2, 64);
    const answers = [1, 2, 3, 4].map((n) => calls.call(n));
    expect(groups).toEqual([[1], [2]]);
    releaseAll();
    await tick();
    expect(groups).toEqual([[1], [2], [3, 4]]);
    releaseAll();
    expect(await Promise.all(answers)).toEqual([2, 4, 6, 8]);
  });

  it('settles each call of a group with its own outcome', async () => {
    const { run, releaseAll } = recorder(true);
    const calls = new GroupedCalls(run, 1, 64);
    const outcomes = Promise.allSettled([1, 2, 3, 4].map((n) => calls.call(n)));
    for (let i = 0; i < 3; i++) {
      releaseAll();
      await tick();
    }
    expect((await outcomes).map((o) => (o.status === 'fulfilled' ? o.value : (o.reason as Error).message))).toEqual(['odd 1', 4, 'odd 3', 8]);
  });

  it('fails every call of a group whose run throws, and goes on with the next', async () => {
    let runs = 0;
    const calls = new GroupedCalls<number, number>(
      async (inputs) => {
        runs += 1;
        if (runs === 1) throw new Error('the database is gone');
        return inputs.map((n) => ({ status: 'fulfilled', value: n }));
      },
      1,
      64,
    );
    const failed = Promise.allSettled([calls.call(1), calls.call(2)]);
    expect((await failed).map((o) => o.status)).toEqual(['rejected', 'fulfilled']);
    expect(await calls.call(3)).toBe(3);
  });
});
