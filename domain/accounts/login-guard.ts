import type { EntityManager } from '@mikro-orm/postgresql';
import { AppError } from '../errors.ts';
import { takeSlot } from '../ratelimit/take.ts';
import { normalizeEmail } from './signup.ts';

// Password guessing: every login attempt spends a slot of its account and of its client address, in rolling
// 15-minute windows shared by all API processes. Counting attempts (not only failures) keeps the check
// before the password hash, so a locked-out guesser costs us no Argon2 work.
export const LOGIN_WINDOW_SECONDS = 15 * 60;
export const LOGIN_ATTEMPTS_PER_ACCOUNT = 10;
export const LOGIN_ATTEMPTS_PER_ADDRESS = 50;

export async function guardLogin(em: EntityManager, email: string, clientAddress: string): Promise<void> {
  for (const [key, limit] of [
    [`login:account:${normalizeEmail(email)}`, LOGIN_ATTEMPTS_PER_ACCOUNT],
    [`login:address:${clientAddress}`, LOGIN_ATTEMPTS_PER_ADDRESS],
  ] as const) {
    const slot = await takeSlot(em, key, limit, LOGIN_WINDOW_SECONDS);
    if (!slot.allowed) {
      throw new AppError('rate_limited', 'too_many_attempts', `too many sign-in attempts; retry in ${slot.retryAfterSeconds} s`, { retry_after: slot.retryAfterSeconds });
    }
  }
}
