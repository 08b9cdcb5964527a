import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import * as passwords from '../../domain/accounts/passwords.ts';
import { startStack, type Stack } from '../support/stack.ts';

// The real Argon2 hash, watched: a reset with a token that cannot be used must not spend one.
vi.mock('../../domain/accounts/passwords.ts', async (importOriginal) => {
  const original = await importOriginal<typeof import('../../domain/accounts/passwords.ts')>();
  return { ...original, hashPassword: vi.fn(original.hashPassword) };
});

let stack: Stack;
beforeAll(async () => {
  stack = await startStack({ relay: false });
});
afterAll(async () => stack?.close());

describe('POST /api/auth/reset-consume', () => {
  it('checks the token before it hashes the new password', async () => {
    const hash = vi.mocked(passwords.hashPassword);
    hash.mockClear();
    const res = await stack.api.post('/api/auth/reset-consume', { body: { token: 'no-such-token', password: 'a brand new password' } });
    expect(res.status).toBe(400);
    expect(res.body.error).toBe('invalid_token');
    expect(hash).not.toHaveBeenCalled();
  });
});
