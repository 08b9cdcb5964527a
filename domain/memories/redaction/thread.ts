// The body of a redaction thread (off-thread.ts): loads the rules once, then redacts the texts it is sent.
import { parentPort } from 'node:worker_threads';
import type { ThreadReady, ThreadReply } from '../../threads.ts';
import { redactSecrets, type RedactionResult } from './redact.ts';

const port = parentPort!;
port.on('message', (text: string) => {
  try {
    port.postMessage({ value: redactSecrets(text) } satisfies ThreadReply<RedactionResult>);
  } catch (err) {
    port.postMessage({ error: String(err) } satisfies ThreadReply<RedactionResult>);
  }
});
port.postMessage({ ready: true } satisfies ThreadReady);
