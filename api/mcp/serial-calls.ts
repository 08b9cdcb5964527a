import { serverBusy } from '../../domain/errors.ts';
import { errorReply } from '../http/errors.ts';
import type { ApiCall } from './api-call.ts';

// How long the calls of one MCP request may take together: each waits its turn (and its org's pace) after the one
// before, so a batch of many could otherwise keep its client waiting for minutes.
export const MCP_CALLS_WITHIN_MS = 30_000;

// One call of the API at a time per MCP request, as one client sending them would: an org's MCP concurrency is its
// concurrent requests, so a JSON-RPC batch waits its turn instead of overrunning the org's search queue, whose
// refusals (429) each still cost a pass through the MCP server and the middleware. A call that would begin past
// `withinMs` is not made and answers as the API does when this process is behind (503 server_busy, Retry-After).
export function serialCalls(callApi: ApiCall, withinMs = MCP_CALLS_WITHIN_MS): ApiCall {
  const deadline = performance.now() + withinMs;
  let previous: Promise<unknown> = Promise.resolve();
  return (method, path, body) => {
    const answer = previous.then(() => {
      if (performance.now() <= deadline) return callApi(method, path, body);
      return errorReply(serverBusy(`this MCP request's calls took more than ${withinMs / 1000} s, so this one was not made`));
    });
    previous = answer.catch(() => undefined);
    return answer;
  };
}
