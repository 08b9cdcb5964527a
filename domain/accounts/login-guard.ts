import type { EntityManager } from '@mikro-orm/postgresql';
import ipaddr from 'ipaddr.js';
import { rateLimited } from '../errors.ts';
import { newId } from '../ids.ts';
import { enqueueJobs } from '../outbox/enqueue.ts';
import { peekSlot, takeSlot, type SlotDecision } from '../ratelimit/take.ts';
import { normalizeEmail } from './signup.ts';

// Password guessing, in rolling 15-minute windows shared by all API processes. Only failures count, so people
// signing in behind one address (an office, a carrier's NAT) never use up each other's attempts:
// - an account gets 10 failed attempts from one client address, so knowing someone's e-mail is not enough to lock
//   them out from their own address;
// - a client address gets 50 failed attempts over all accounts;
// - an account gets 20 failed attempts over all addresses; past that, one attempt a minute goes through, whoever
//   makes it, so a guesser rotating addresses gets a guess a minute and the owner still gets in.
// An IPv6 client is counted by its /64, the block one subscriber gets. Every limit is checked before the password
// hash, so a refused guesser costs no Argon2 work. The failure that fills an account's window mails its owner a
// notice (at most one a window), through the outbox.
export const LOGIN_WINDOW_SECONDS = 15 * 60;
const LOGIN_FAILURES_PER_ACCOUNT_AND_ADDRESS = 10;
const LOGIN_FAILURES_PER_ADDRESS = 50;
export const LOGIN_FAILURES_PER_ACCOUNT = 20;
const LOGIN_SLOW_SECONDS = 60;
export const SIGN_IN_NOTICE_MAIL_JOB = 'signInNoticeMail';

export interface SignInNoticeArgs {
  email: string;
  mailKey: string;
}

// The client as the limits count it: an IPv4 address, or an IPv6 address's /64.
function addressGroup(clientAddress: string): string {
  if (!ipaddr.isValid(clientAddress)) return clientAddress;
  const parsed = ipaddr.process(clientAddress);
  if (parsed.kind() === 'ipv4') return parsed.toString();
  const parts = (parsed as ipaddr.IPv6).parts.slice(0, 4).map((p) => p.toString(16));
  return `${parts.join(':')}::/64`;
}

const keys = (email: string, clientAddress: string) => {
  const account = normalizeEmail(email);
  const address = addressGroup(clientAddress);
  return {
    accountAtAddress: `login:failures:${account}:${address}`,
    address: `login:address-failures:${address}`,
    account: `login:account-failures:${account}`,
    slow: `login:account-slow:${account}`,
    notice: `login:account-notice:${account}`,
  };
};

function refuse(slot: SlotDecision): never {
  throw rateLimited('too_many_attempts', 'too many sign-in attempts', slot.retryAfterSeconds);
}

export async function guardLogin(em: EntityManager, email: string, clientAddress: string): Promise<void> {
  const key = keys(email, clientAddress);
  const here = await peekSlot(em, key.accountAtAddress, LOGIN_FAILURES_PER_ACCOUNT_AND_ADDRESS, LOGIN_WINDOW_SECONDS);
  if (!here.allowed) refuse(here);
  const address = await peekSlot(em, key.address, LOGIN_FAILURES_PER_ADDRESS, LOGIN_WINDOW_SECONDS);
  if (!address.allowed) refuse(address);
  const account = await peekSlot(em, key.account, LOGIN_FAILURES_PER_ACCOUNT, LOGIN_WINDOW_SECONDS);
  if (account.allowed) return;
  const slow = await takeSlot(em, key.slow, 1, LOGIN_SLOW_SECONDS);
  if (!slow.allowed) refuse(slow);
}

// A wrong e-mail or password counts toward each limit (a window already full keeps its hits, so a refusal lasts
// until the oldest of them leaves it).
export async function recordLoginFailure(em: EntityManager, email: string, clientAddress: string): Promise<void> {
  const key = keys(email, clientAddress);
  await takeSlot(em, key.accountAtAddress, LOGIN_FAILURES_PER_ACCOUNT_AND_ADDRESS, LOGIN_WINDOW_SECONDS);
  await takeSlot(em, key.address, LOGIN_FAILURES_PER_ADDRESS, LOGIN_WINDOW_SECONDS);
  const counted = await takeSlot(em, key.account, LOGIN_FAILURES_PER_ACCOUNT, LOGIN_WINDOW_SECONDS);
  if (!counted.allowed || (await peekSlot(em, key.account, LOGIN_FAILURES_PER_ACCOUNT, LOGIN_WINDOW_SECONDS)).allowed) return;
  if (!(await takeSlot(em, key.notice, 1, LOGIN_WINDOW_SECONDS)).allowed) return;
  // The workflow looks the account up and sends nothing when the address has none.
  const mailKey = newId();
  const args: SignInNoticeArgs = { email: normalizeEmail(email), mailKey };
  await enqueueJobs(em, [
    {
      orgId: null,
      jobType: SIGN_IN_NOTICE_MAIL_JOB,
      jobKey: `sign-in-notice-mail-${mailKey}`,
      args: [args],
      description: 'tell an account owner of repeated failed sign-ins',
    },
  ]);
}
