import { describe, expect, it } from 'vitest';
import { AppError } from '../../domain/errors.ts';
import { GroupedCalls, QUEUED_ROUNDS } from '../../domain/grouped-calls.ts';

// A `run` that answers each input doubled, or refuses odd ones, and records the groups it was given; each group
// waits for `release` so that the test decides when the statements in flight end.
function recorder(refuseOdd = false) {
  const groups: number[][] = [];
  const releases: (() => void)[] = [];
  const run = async (inputs: number[]): Promise<PromiseSettledResult<number>[]> => {
    groups.push(inputs);
    await new Promise<void>((resolve) => releases.push(resolve));
    return inputs.map((n) =>
      refuseOdd && n % 2 === 1 ? { status: 'rejected', reason: new Error(`odd ${n}`) } : { status: 'fulfilled', value: n * 2 },
    );
  };
  return { groups, run, releaseAll: () => releases.splice(0).forEach((release) => release()) };
}

const tick = () => new Promise((resolve) => setImmediate(resolve));

describe('GroupedCalls', () => {
  it('runs a call at once when a slot is free, and groups the calls that queue meanwhile', async () => {
    const { groups, run, releaseAll } = recorder();
    const calls = new GroupedCalls(run, 1, 3, 'calls');
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
    const calls = new GroupedCalls(run, 2, 64, 'calls');
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
    const calls = new GroupedCalls(run, 1, 64, 'calls');
    const outcomes = Promise.allSettled([1, 2, 3, 4].map((n) => calls.call(n)));
    for (let i = 0; i < 3; i++) {
      releaseAll();
      await tick();
    }
    expect((await outcomes).map((o) => (o.status === 'fulfilled' ? o.value : (o.reason as Error).message))).toEqual([
      'odd 1',
      4,
      'odd 3',
      8,
    ]);
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
      'calls',
    );
    const failed = Promise.allSettled([calls.call(1), calls.call(2)]);
    expect((await failed).map((o) => o.status)).toEqual(['rejected', 'fulfilled']);
    expect(await calls.call(3)).toBe(3);
  });

  it('lets at most QUEUED_ROUNDS groups of calls wait, and refuses the next at once with server_busy', async () => {
    const { groups, run, releaseAll } = recorder();
    const calls = new GroupedCalls(run, 1, 2, 'saves');
    const inflight = calls.call(0);
    const waiting = Array.from({ length: QUEUED_ROUNDS * 2 }, (_, i) => calls.call(i + 1));
    const refused = await calls.call(99).catch((err: unknown) => err);
    expect(refused).toBeInstanceOf(AppError);
    expect(refused).toMatchObject({ kind: 'unavailable', error: 'server_busy', extra: { retry_after: 1 } });
    expect((refused as AppError).message).toMatch(/^16 saves are waiting already/);
    // Those that waited all run, and a call is taken again once the queue has room.
    for (let round = 0; round <= QUEUED_ROUNDS; round++) {
      releaseAll();
      await tick();
    }
    expect(await Promise.all([inflight, ...waiting])).toEqual(Array.from({ length: QUEUED_ROUNDS * 2 + 1 }, (_, i) => 2 * i));
    expect(groups.flat()).not.toContain(99);
    const later = calls.call(7);
    releaseAll();
    expect(await later).toBe(14);
  });
});
