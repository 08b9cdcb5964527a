// Section 8 of the contract: a write answered 429 did nothing, so any call may wait Retry-After and go
// again. A 5xx or a network failure may have done the work, so only calls that are safe to repeat retry it:
// reads (GET, and the POSTs that only read), PUT and DELETE, and creates that carry an Idempotency-Key.
import { MemoryServiceConnectionError } from './errors.ts';

const READ_ONLY_POSTS = ['/api/memories/list', '/api/memories/search', '/api/memories/search/bulk'];
const retrySafe = (request: Request): boolean =>
  ['GET', 'HEAD', 'PUT', 'DELETE'].includes(request.method) ||
  request.headers.has('idempotency-key') ||
  (request.method === 'POST' && READ_ONLY_POSTS.includes(new URL(request.url).pathname));

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

// A fetch that retries as above, up to maxRetries times, and turns a failure to get any answer into a
// MemoryServiceConnectionError (fetch implementations each reject with their own TypeError). An abort by
// the caller's signal stays the AbortError it is. A 429 whose Retry-After is over maxRetryWait seconds (an
// hourly limit's) is answered at once rather than waited out.
export function retryingFetch(inner: typeof fetch, maxRetries: number, maxRetryWait: number): typeof fetch {
  return async (input, init) => {
    const request = new Request(input, init);
    for (let attempt = 0; ; attempt++) {
      let response: Response | undefined;
      try {
        response = await inner(request.clone());
      } catch (err) {
        if (request.signal.aborted) throw err; // the caller's own abort, not a failure of the service
        if (attempt >= maxRetries || !retrySafe(request)) throw new MemoryServiceConnectionError(request, err);
        await sleep(250 * 2 ** attempt);
        continue;
      }
      if (attempt >= maxRetries) return response;
      if (response.status === 429) {
        const wait = Number(response.headers.get('retry-after') ?? '1');
        if (wait > maxRetryWait) return response;
        await sleep(wait * 1000);
        continue;
      }
      if (response.status >= 500 && retrySafe(request)) {
        await sleep(250 * 2 ** attempt);
        continue;
      }
      return response;
    }
  };
}
