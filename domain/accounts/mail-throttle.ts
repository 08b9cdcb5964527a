import type { EntityManager } from '@mikro-orm/postgresql';
import { AppError } from '../errors.ts';
import { takeSlot } from '../ratelimit/take.ts';
import { normalizeEmail } from './signup.ts';

// The public routes that send mail must not become a mail cannon: each request spends a slot of its
// recipient and of its client address, in rolling windows shared by all API processes, before anything is
// queued. A refused request queues no workflow and sends nothing. The recipient's limit applies whether or not
// the address has an account, so a 429 tells nobody which addresses exist.
export const MAILS_PER_RECIPIENT = 3;
export const MAIL_RECIPIENT_WINDOW_SECONDS = 60 * 60;
export const MAIL_REQUESTS_PER_CLIENT = 10;
export const MAIL_CLIENT_WINDOW_SECONDS = 15 * 60;

async function spend(em: EntityManager, slots: [key: string, limit: number, windowSeconds: number][]): Promise<void> {
  for (const [key, limit, windowSeconds] of slots) {
    const slot = await takeSlot(em, key, limit, windowSeconds);
    if (!slot.allowed) {
      throw new AppError('rate_limited', 'too_many_requests', `too many mail requests; retry in ${slot.retryAfterSeconds} s`, { retry_after: slot.retryAfterSeconds });
    }
  }
}

export const throttleResetMail = (em: EntityManager, email: string, clientAddress: string): Promise<void> =>
  spend(em, [
    [`mail:client:${clientAddress}`, MAIL_REQUESTS_PER_CLIENT, MAIL_CLIENT_WINDOW_SECONDS],
    [`mail:reset:${normalizeEmail(email)}`, MAILS_PER_RECIPIENT, MAIL_RECIPIENT_WINDOW_SECONDS],
  ]);

export const throttleVerificationMail = (em: EntityManager, userId: string, clientAddress: string): Promise<void> =>
  spend(em, [
    [`mail:client:${clientAddress}`, MAIL_REQUESTS_PER_CLIENT, MAIL_CLIENT_WINDOW_SECONDS],
    [`mail:verification:${userId}`, MAILS_PER_RECIPIENT, MAIL_RECIPIENT_WINDOW_SECONDS],
  ]);
