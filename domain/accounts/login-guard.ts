import type { EntityManager } from '@mikro-orm/postgresql';
import { AppError } from '../errors.ts';
import { peekSlot, takeSlot, type SlotDecision } from '../ratelimit/take.ts';
import { normalizeEmail } from './signup.ts';

// Password guessing, in rolling 15-minute windows shared by all API processes:
// - a client address gets 50 sign-in attempts over all accounts, failed or not;
// - an account gets 10 failed attempts from one client address. Only failures count, and only those of the
//   address they came from, so knowing someone's e-mail is not enough to lock them out: the owner, signing in
//   with the right password from their own address, is never refused for what a guesser did elsewhere. A
//   guesser needs a new address every 10 tries per account, and each address stops after 50.
// Both limits are checked before the password hash, so a refused guesser costs no Argon2 work.
export const LOGIN_WINDOW_SECONDS = 15 * 60;
export const LOGIN_FAILURES_PER_ACCOUNT_AND_ADDRESS = 10;
export const LOGIN_ATTEMPTS_PER_ADDRESS = 50;

const accountKey = (email: string, clientAddress: string) => `login:failures:${normalizeEmail(email)}:${clientAddress}`;

function refuse(slot: SlotDecision): never {
  throw new AppError('rate_limited', 'too_many_attempts', `too many sign-in attempts; retry in ${slot.retryAfterSeconds} s`, { retry_after: slot.retryAfterSeconds });
}

export async function guardLogin(em: EntityManager, email: string, clientAddress: string): Promise<void> {
  const failures = await peekSlot(em, accountKey(email, clientAddress), LOGIN_FAILURES_PER_ACCOUNT_AND_ADDRESS, LOGIN_WINDOW_SECONDS);
  if (!failures.allowed) refuse(failures);
  const attempts = await takeSlot(em, `login:address:${clientAddress}`, LOGIN_ATTEMPTS_PER_ADDRESS, LOGIN_WINDOW_SECONDS);
  if (!attempts.allowed) refuse(attempts);
}

// A wrong e-mail or password: counts toward the account's failures from this address (a window already full
// keeps its hits, so the refusal lasts until the oldest of them leaves it).
export async function recordLoginFailure(em: EntityManager, email: string, clientAddress: string): Promise<void> {
  await takeSlot(em, accountKey(email, clientAddress), LOGIN_FAILURES_PER_ACCOUNT_AND_ADDRESS, LOGIN_WINDOW_SECONDS);
}
