import { describe, expect, it } from 'vitest';
import { Turns } from '../../domain/turns.ts';

const takeAll = <T>(turns: Turns<T>): T[] => {
  const taken: T[] = [];
  for (let item = turns.shift(); item !== undefined; item = turns.shift()) taken.push(item);
  return taken;
};

describe("turns between owners (the local model's line)", () => {
  it("takes one item of each owner in turn, each owner's items in their order", () => {
    const turns = new Turns<string>();
    for (const item of ['a1', 'a2', 'a3', 'a4', 'a5']) turns.push('a', item);
    turns.push('b', 'b1');
    turns.push('c', 'c1');
    turns.push('c', 'c2');
    expect(turns.size).toBe(8);
    expect(takeAll(turns)).toEqual(['a1', 'b1', 'c1', 'a2', 'c2', 'a3', 'a4', 'a5']);
    expect(turns.size).toBe(0);
    expect(turns.shift()).toBeUndefined();
  });

  it('puts an owner that starts waiting behind the owners already waiting, one item of each at most', () => {
    const turns = new Turns<string>();
    for (let i = 1; i <= 100; i++) turns.push('busy', `busy${i}`);
    turns.push('other', 'other1');
    expect(turns.shift()).toBe('busy1');
    turns.push('quiet', 'quiet1');
    // busy went behind other when served; quiet joins behind both, and waits for one item of each.
    expect([turns.shift(), turns.shift(), turns.shift()]).toEqual(['other1', 'busy2', 'quiet1']);
    expect(turns.size).toBe(98);
  });

  it('gives the turn to an owner with the fewest items under way, the first in turn among equals', () => {
    const turns = new Turns<string>();
    for (const item of ['a1', 'a2']) turns.push('a', item);
    turns.push('b', 'b1');
    turns.push('c', 'c1');
    const underWay = new Map([
      ['a', 2],
      ['b', 1],
    ]);
    const count = (owner: string) => underWay.get(owner) ?? 0;
    expect(turns.shift(count)).toBe('c1');
    underWay.set('c', 1);
    expect(turns.shift(count)).toBe('b1');
    expect(turns.shift(count)).toBe('a1');
  });

  it('takes out one waiting item that gives up, keeping the others and the turn order', () => {
    const turns = new Turns<string>();
    for (const [owner, item] of [['a', 'a1'], ['b', 'b1'], ['a', 'a2'], ['c', 'c1']] as const) turns.push(owner, item);
    expect(turns.remove('a', 'a1')).toBe(true);
    expect(turns.remove('a', 'a1')).toBe(false);
    expect(turns.remove('c', 'c1')).toBe(true);
    expect([turns.size, turns.waiting('a'), turns.waiting('c')]).toEqual([2, 1, 0]);
    expect(takeAll(turns)).toEqual(['a2', 'b1']);
  });

  it('gives every waiting item out when drained', () => {
    const turns = new Turns<number>();
    turns.push('a', 1);
    turns.push('b', 2);
    turns.push('a', 3);
    expect(turns.drain().sort()).toEqual([1, 2, 3]);
    expect(turns.size).toBe(0);
    expect(turns.shift()).toBeUndefined();
    turns.push('a', 4);
    expect(takeAll(turns)).toEqual([4]);
  });
});
