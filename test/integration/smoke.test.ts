import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { signUp, startStack, type Stack } from '../support/stack.ts';

let stack: Stack;
beforeAll(async () => {
  stack = await startStack();
});
afterAll(async () => stack?.close());

describe('smoke', () => {
  it('signs up and reads /me', async () => {
    const account = await signUp(stack.api);
    const me = await stack.api.get('/api/auth/me', { token: account.token });
    expect(me.status).toBe(200);
    expect(me.body.user.email).toBe(account.user.email);
  });
});
