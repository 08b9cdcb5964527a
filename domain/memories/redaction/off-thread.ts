import { startThreads, type ThreadPool } from '../../threads.ts';
import { redactSecrets, type RedactionResult } from './redact.ts';

// Texts from this many characters on are redacted on a thread of their own: the rules' expressions take about
// 1 ms over 32 KB of prose and 6 ms over 256 KB (`node bench/redaction.ts`; more on adversarial input), which on
// the event loop would hold up every other request of the process. Shorter texts cost less than the trip.
export const OFF_THREAD_CHARS = 16_384;

// One thread, started on first use (most processes never see a long text), each org's texts in its turn.
let pool: Promise<ThreadPool<string, RedactionResult>> | undefined;

// The text with its secrets redacted, for an org (whose turn it waits for when the thread is busy).
export async function redactOffThread(text: string, orgId: string): Promise<RedactionResult> {
  if (text.length < OFF_THREAD_CHARS) return redactSecrets(text);
  pool ??= startThreads<string, RedactionResult>(
    new URL('./thread.ts', import.meta.url),
    undefined,
    1,
    'secret redaction',
    (detail) => new Error(detail),
  ).catch((err: unknown) => {
    pool = undefined;
    throw err;
  });
  return (await pool).run(orgId, text);
}
