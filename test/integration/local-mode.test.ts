import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LOCAL_ORG_ID, LOCAL_USER_ID } from '../../domain/accounts/local.ts';
import { startStack, type Stack } from '../support/stack.ts';

let stack: Stack;
beforeAll(async () => {
  stack = await startStack({ env: { SERVICE_MODE: 'local' }, relay: false });
});
afterAll(async () => stack?.close());

describe('SERVICE_MODE=local', () => {
  it('needs no credential and acts as one implicit user and org on the enterprise plan', async () => {
    const me = await stack.api.get('/api/auth/me');
    expect(me.status).toBe(200);
    expect(me.body.user.id).toBe(LOCAL_USER_ID);
    expect(me.body.org).toMatchObject({ id: LOCAL_ORG_ID, plan: 'enterprise', role: 'owner' });
    const token = await stack.api.post('/api/auth/tokens', { body: { name: 'script' } });
    expect(token.status).toBe(201);
    const events = await stack.api.get('/api/events?action=token.create');
    expect(events.body.events[0]).toMatchObject({ actor_user_id: LOCAL_USER_ID, actor_token: null });
  });
});
