// One request of the public API as a tool sends it: the MCP layer adds no behaviour of its own, so
// validation, quotas, rate limits and tenancy are the API's, answered the API's way.
export interface ApiAnswer {
  status: number;
  body: unknown;
  retryAfter: string | undefined;
}
export type ApiCall = (method: 'GET' | 'POST' | 'PATCH' | 'DELETE', path: string, body?: unknown) => Promise<ApiAnswer>;
