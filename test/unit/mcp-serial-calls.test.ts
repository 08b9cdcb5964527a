import { afterEach, expect, it, vi } from 'vitest';
import type { ApiAnswer } from '../../api/mcp/api-call.ts';
import { serialCalls } from '../../api/mcp/serial-calls.ts';

afterEach(() => void vi.useRealTimers());

it("makes one MCP request's calls one after another, and answers those due past its deadline with 503 unmade", async () => {
  vi.useFakeTimers({ toFake: ['setTimeout', 'performance'] });
  const made: string[] = [];
  // Each call of the API takes 400 ms.
  const callApi = async (_method: string, path: string): Promise<ApiAnswer> => {
    made.push(`${path} at ${performance.now()}`);
    await new Promise((resolve) => setTimeout(resolve, 400));
    return { status: 200, body: { path }, retryAfter: undefined };
  };
  const call = serialCalls(callApi, 1_000);
  const answers = Promise.all(['/a', '/b', '/c', '/d'].map((path) => call('GET', path)));
  await vi.advanceTimersByTimeAsync(2_000);
  // /a begins at 0, /b at 400, /c at 800; /d would begin at 1,200, past the deadline.
  expect(made).toEqual(['/a at 0', '/b at 400', '/c at 800']);
  const [, , c, d] = await answers;
  expect(c).toEqual({ status: 200, body: { path: '/c' }, retryAfter: undefined });
  expect(d).toMatchObject({ status: 503, body: { error: 'server_busy', retry_after: 1 }, retryAfter: '1' });
});
