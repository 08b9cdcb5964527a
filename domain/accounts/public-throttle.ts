import type { EntityManager } from '@mikro-orm/postgresql';
import { rateLimited } from '../errors.ts';
import { takeSlot } from '../ratelimit/take.ts';
import { normalizeEmail } from './signup.ts';

// The public routes spend slots before they do any work, in rolling windows shared by all API processes
// (sign-in has its own guard, login-guard.ts, which counts failures only). A refused request queues nothing
// and sends nothing. Limits keyed by an e-mail apply whether or not it has an account, so a 429 tells
// nobody which addresses exist.

// Mail: a reset or verification mail at most 3 times an hour per recipient, 10 mail requests per client
// address in 15 minutes: no mail cannon.
const MAILS_PER_RECIPIENT = 3;
const MAIL_RECIPIENT_WINDOW_SECONDS = 60 * 60;
const MAIL_REQUESTS_PER_CLIENT = 10;
const MAIL_CLIENT_WINDOW_SECONDS = 15 * 60;
// Single-use tokens (verify-email, reset-consume): 30 tries per client address in 15 minutes. Guessing a
// 256-bit token is hopeless anyway; this bounds the work a client can make us do.
const TOKEN_TRIES_PER_CLIENT = 30;
const TOKEN_WINDOW_SECONDS = 15 * 60;
// Sign-ins through the identity provider started per client address in 15 minutes: each start stores a pending
// authorization (state, nonce, PKCE verifier) until it expires.
export const IDP_STARTS_PER_CLIENT = 30;
const IDP_START_WINDOW_SECONDS = 15 * 60;

// OAuth client registrations per client address an hour (POST /oauth/register): each one is a stored row.
export const CLIENT_REGISTRATIONS_PER_CLIENT = 20;
const CLIENT_REGISTRATION_WINDOW_SECONDS = 60 * 60;

// Sign-ups per client address an hour: SIGNUPS_PER_ADDRESS_PER_HOUR (configuration), each one an Argon2
// hash, an org, a workflow and a mail.
const SIGNUP_WINDOW_SECONDS = 60 * 60;

async function spend(em: EntityManager, what: string, slots: [key: string, limit: number, windowSeconds: number][]): Promise<void> {
  for (const [key, limit, windowSeconds] of slots) {
    const slot = await takeSlot(em, key, limit, windowSeconds);
    if (!slot.allowed) throw rateLimited('too_many_requests', `too many ${what}`, slot.retryAfterSeconds);
  }
}

export const throttleResetMail = (em: EntityManager, email: string, clientAddress: string): Promise<void> =>
  spend(em, 'mail requests', [
    [`mail:client:${clientAddress}`, MAIL_REQUESTS_PER_CLIENT, MAIL_CLIENT_WINDOW_SECONDS],
    [`mail:reset:${normalizeEmail(email)}`, MAILS_PER_RECIPIENT, MAIL_RECIPIENT_WINDOW_SECONDS],
  ]);

export const throttleVerificationMail = (em: EntityManager, userId: string, clientAddress: string): Promise<void> =>
  spend(em, 'mail requests', [
    [`mail:client:${clientAddress}`, MAIL_REQUESTS_PER_CLIENT, MAIL_CLIENT_WINDOW_SECONDS],
    [`mail:verification:${userId}`, MAILS_PER_RECIPIENT, MAIL_RECIPIENT_WINDOW_SECONDS],
  ]);

export const throttleIdentityProviderStart = (em: EntityManager, clientAddress: string): Promise<void> =>
  spend(em, 'sign-ins started from this address', [[`idp:client:${clientAddress}`, IDP_STARTS_PER_CLIENT, IDP_START_WINDOW_SECONDS]]);

export const throttleClientRegistration = (em: EntityManager, clientAddress: string): Promise<void> =>
  spend(em, 'client registrations from this address', [
    [`oauth-register:client:${clientAddress}`, CLIENT_REGISTRATIONS_PER_CLIENT, CLIENT_REGISTRATION_WINDOW_SECONDS],
  ]);

export const throttleTokenUse = (em: EntityManager, clientAddress: string): Promise<void> =>
  spend(em, 'token attempts', [[`token:client:${clientAddress}`, TOKEN_TRIES_PER_CLIENT, TOKEN_WINDOW_SECONDS]]);

// A limit of 0 turns the sign-up limit off (load tests, the test suite: every test signs up from one address).
export const throttleSignup = (em: EntityManager, clientAddress: string, perHour: number): Promise<void> =>
  perHour === 0
    ? Promise.resolve()
    : spend(em, 'sign-ups from this address', [[`signup:client:${clientAddress}`, perHour, SIGNUP_WINDOW_SECONDS]]);
