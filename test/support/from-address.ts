import { request } from 'node:http';

// A JSON POST from a chosen loopback address (all of 127.0.0.0/8 reaches a server listening on 127.0.0.1), so
// that a test can be several clients: without trusted proxies the API takes the socket's address as the client's.
export function postFrom(
  address: string,
  url: string,
  body: unknown,
  headers: Record<string, string> = {},
): Promise<{ status: number; body: any; retryAfter: number }> {
  return new Promise((resolve, reject) => {
    const req = request(
      url,
      { method: 'POST', localAddress: address, headers: { 'content-type': 'application/json', ...headers } },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => (text += chunk));
        res.on('end', () =>
          resolve({ status: res.statusCode!, body: text ? JSON.parse(text) : undefined, retryAfter: Number(res.headers['retry-after']) }),
        );
      },
    );
    req.on('error', reject);
    req.end(JSON.stringify(body));
  });
}
