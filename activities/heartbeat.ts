import { Context } from '@temporalio/activity';

// Runs `work` while telling Temporal every `everyMs` that the attempt is alive, with `details()` for the Web UI's
// pending-activity panel: a worker that dies mid-attempt is then noticed within the activity's heartbeatTimeout,
// not its much longer startToCloseTimeout.
export async function heartbeating<T>(everyMs: number, details: () => Promise<unknown>, work: () => Promise<T>): Promise<T> {
  const ctx = Context.current();
  const beat = setInterval(() => {
    details().then(
      (d) => ctx.heartbeat(d),
      () => ctx.heartbeat(null),
    );
  }, everyMs);
  try {
    return await work();
  } finally {
    clearInterval(beat);
  }
}
