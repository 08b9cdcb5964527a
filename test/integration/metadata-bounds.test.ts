import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HISTORY_ENTRIES_KEPT } from '../../domain/memories/limits.ts';
import { signUp, startStack, type SignedUp, type Stack } from '../support/stack.ts';

// A memory's metadata stays bounded: metadata.history keeps the latest edits, a merge cannot grow metadata past
// its limit, and the history route answers a page of events at a time.
let stack: Stack;
let a: SignedUp;
beforeAll(async () => {
  stack = await startStack({ env: { WRITE_RATE_LIMIT_PER_MINUTE: '0' } });
  a = await signUp(stack.api);
});
afterAll(async () => stack?.close());

const save = async (body: Record<string, unknown>) =>
  (await stack.api.post('/api/memories', { token: a.token, body })).body as { id: string };
const patch = (id: string, body: Record<string, unknown>) => stack.api.patch(`/api/memories/${id}`, { token: a.token, body });

describe('metadata bounds', () => {
  it('keeps the latest edits in metadata.history and pages the audit events', async () => {
    const { id } = await save({ content: 'edit 0' });
    const edits = HISTORY_ENTRIES_KEPT + 5;
    for (let i = 1; i <= edits; i++) expect((await patch(id, { content: `edit ${'x'.repeat(i)}` })).status).toBe(200);
    const history = (await stack.api.get(`/api/memories/${id}/history`, { token: a.token })).body;
    expect(history.edits).toHaveLength(HISTORY_ENTRIES_KEPT);
    // The oldest kept is the 6th edit, whose text before had 5 x's ("edit " and 5).
    expect(history.edits[0].prev_content_len).toBe('edit '.length + 5);
    expect(history.edits.at(-1).prev_content_len).toBe('edit '.length + edits - 1);

    // One save and 105 edits: 106 events, in pages of 50 without a gap or a repeat.
    const seen: string[] = [];
    let after: string | null = null;
    do {
      const page: { events: { id: string; action: string }[]; next_after: string | null } = (
        await stack.api.get(`/api/memories/${id}/history?limit=50${after ? `&after=${after}` : ''}`, { token: a.token })
      ).body;
      expect(page.events.length).toBeLessThanOrEqual(50);
      seen.push(...page.events.map((e) => e.id));
      after = page.next_after;
    } while (after);
    expect(seen).toHaveLength(edits + 1);
    expect(new Set(seen).size).toBe(seen.length);
    expect(history.events).toHaveLength(100);
    expect(history.next_after).toBe(seen[99]);
    expect((await stack.api.get(`/api/memories/${id}/history?limit=501`, { token: a.token })).status).toBe(400);
  });

  it('refuses a merge that grows metadata past its limit, naming it, and changes nothing', async () => {
    const { id } = await save({ content: 'metadata grows', metadata: { a: 'x'.repeat(40_000) } });
    const grown = await patch(id, { metadata: { b: 'y'.repeat(40_000) } });
    expect(grown.status).toBe(400);
    expect(grown.body).toMatchObject({ error: 'metadata_too_large', max_chars: 65_536 });
    const stored = (await stack.api.get(`/api/memories/${id}`, { token: a.token })).body;
    expect(Object.keys(stored.metadata)).toEqual(['a']);
    // Replacing the large key with a small one still works.
    expect((await patch(id, { metadata: { a: null, b: 'small' } })).status).toBe(200);
  });
});
