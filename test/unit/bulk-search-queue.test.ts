import pLimit from 'p-limit';
import { describe, expect, it } from 'vitest';
import { BULK_WAITING_PER_SLOT, searchBulk } from '../../domain/search/bulk.ts';

// Bulk searches wait for the process's slots; past a bound, a new bulk call is refused at once instead of queuing.
describe('bulk search queue', () => {
  it('refuses a bulk call with server_busy while too many searches wait for a slot, and takes one once they ran', async () => {
    const slots = pLimit(1);
    let release!: () => void;
    const blocked = new Promise<void>((resolve) => (release = resolve));
    const occupying = Array.from({ length: BULK_WAITING_PER_SLOT + 1 }, () => slots(() => blocked));
    const fork = () => {
      throw new Error('a refused call never reaches the database');
    };
    const options = { k: 5, mode: 'lexical' as const, filters: {}, slots };
    await expect(searchBulk(fork, 'org', ['a question'], options)).rejects.toMatchObject({ kind: 'unavailable', error: 'server_busy' });
    release();
    await Promise.all(occupying);
    // With the queue drained the call goes ahead (and here reaches the fork, which has no database).
    await expect(searchBulk(fork, 'org', ['a question'], options)).rejects.toThrow('a refused call never reaches the database');
  });
});
