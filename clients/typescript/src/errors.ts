// The client's one error style: every failure of a call is thrown as a MemoryServiceError, an error answer of
// the API with its status and body, or a MemoryServiceConnectionError (status 0) when no answer came at all.
import type { components } from './schema.ts';

// The body of every error answer: `error` is the machine-readable code, `message` the server's explanation.
export type ErrorBody = components['schemas']['Error'];

export class MemoryServiceError extends Error {
  readonly status: number;
  readonly error: string;
  readonly body: ErrorBody;
  readonly retryAfter: number | undefined;
  constructor(status: number, body: ErrorBody, retryAfter?: number, options?: ErrorOptions) {
    const code = status ? `${body.error} (HTTP ${status})` : body.error; // status 0: no answer, so no HTTP status
    super(body.message ? `${code}: ${body.message}` : code, options);
    this.name = 'MemoryServiceError';
    this.status = status;
    this.error = body.error;
    this.body = body;
    this.retryAfter = retryAfter;
  }
  get quota(): { used: number; limit: number; plan: string } | undefined {
    return this.body.quota as { used: number; limit: number; plan: string } | undefined;
  }
  get upgradeUrl(): string | undefined {
    return this.body.upgrade_url as string | undefined;
  }
  // On a 401: which of its four cases it is (no_credential, malformed_header, unknown_token, revoked_or_expired).
  get reason(): ErrorBody['reason'] {
    return this.body.reason;
  }
}

// No answer from the service (refused, reset, DNS, TLS, offline), after the retries the call was allowed;
// `cause` is the fetch implementation's own error.
export class MemoryServiceConnectionError extends MemoryServiceError {
  constructor(request: Request, cause: unknown) {
    const reason = cause instanceof Error ? ((cause.cause as Error | undefined)?.message ?? cause.message) : String(cause);
    super(0, { error: 'network_error', message: `${request.method} ${request.url}: ${reason}` }, undefined, { cause });
    this.name = 'MemoryServiceConnectionError';
  }
}

// The data of a `client.api` call, or its error answer thrown as a MemoryServiceError: the helpers' behaviour
// for any route. A body that is not the API's JSON (a proxy's HTML page) keeps its text as the message.
export async function unwrap<T>(result: { data?: T; error?: unknown; response: Response }): Promise<T> {
  const { response, error } = result;
  if (response.ok) return result.data as T;
  const retryAfter = response.headers.get('retry-after');
  const body: ErrorBody =
    typeof error === 'object' && error !== null && typeof (error as ErrorBody).error === 'string'
      ? (error as ErrorBody)
      : { error: `http_${response.status}`, ...(error ? { message: String(error).slice(0, 500) } : {}) };
  throw new MemoryServiceError(response.status, body, retryAfter ? Number(retryAfter) : undefined);
}
