// The dashboard talks to the public API through the TypeScript client, on its own origin, signed in with
// the session cookie (the browser sends it; no token is kept in the page). No automatic retries: a person
// is watching, and an error shows at once with the API's message.
import { MemoryClient, MemoryServiceError, unwrap } from '../../clients/typescript/src/index.ts';
import type { components } from '../../clients/typescript/src/index.ts';

export const client = new MemoryClient({ baseUrl: location.origin, maxRetries: 0 });
export const api = client.api;
export { MemoryServiceError, unwrap };
export type Memory = components['schemas']['Memory'];
export type Account = components['schemas']['Account'];

/** What to tell the person: the API's own message when there is one. */
export function messageOf(err: unknown): string {
  if (err instanceof MemoryServiceError) {
    const message = typeof err.body.message === 'string' ? err.body.message : err.error;
    const issues = Array.isArray(err.body.issues)
      ? (err.body.issues as { path: string; message: string }[]).map((i) => `${i.path}: ${i.message}`).join('; ')
      : '';
    return issues ? `${message} (${issues})` : message;
  }
  return err instanceof Error ? err.message : String(err);
}
