import http from 'node:http';
import https from 'node:https';
import { lookup as dnsLookup } from 'node:dns';
import type { LookupFunction } from 'node:net';
import { isPublicAddress } from '../domain/webhooks/targets.ts';
import type { AttemptResult } from '../domain/webhooks/deliveries.ts';

const DELIVERY_TIMEOUT_MS = 10_000;

// The address check runs inside the connection's own DNS lookup, so the address connected to is the one
// checked (no DNS rebinding between check and connect).
const publicOnlyLookup: LookupFunction = (hostname, options, callback) => {
  dnsLookup(hostname, { ...options, all: true }, (err, addresses) => {
    if (err) return callback(err, '', 0);
    const list = addresses as unknown as { address: string; family: number }[];
    const blocked = list.find((a) => !isPublicAddress(a.address));
    if (blocked) return callback(new Error(`refused non-public address ${blocked.address}`), '', 0);
    if ((options as { all?: boolean }).all) return (callback as unknown as (e: null, a: typeof list) => void)(null, list);
    callback(null, list[0]!.address, list[0]!.family);
  });
};

// How deliveries leave: one signed POST to an endpoint, answered by its outcome (never thrown).
export type WebhookSender = (url: string, headers: Record<string, string>, body: string) => Promise<AttemptResult>;

// Private addresses (loopback, RFC 1918, link-local ...) are refused at connection time unless allowed
// (WEBHOOK_ALLOW_PRIVATE_TARGETS, for local receivers).
export const createWebhookSender =
  (allowPrivate: boolean): WebhookSender =>
  (url, headers, body) =>
    postWebhook(url, headers, body, allowPrivate);

// One POST, no redirects followed, 10 s for the whole exchange.
function postWebhook(url: string, headers: Record<string, string>, body: string, allowPrivate: boolean): Promise<AttemptResult> {
  const started = performance.now();
  const target = new URL(url);
  const transport = target.protocol === 'https:' ? https : http;
  return new Promise((resolve) => {
    const done = (r: { statusCode: number } | { error: string }) =>
      resolve({ ...r, durationMs: performance.now() - started } as AttemptResult);
    const req = transport.request(
      target,
      {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          'content-length': Buffer.byteLength(body).toString(),
          'user-agent': 'memory-service-webhooks/1',
          ...headers,
        },
        ...(allowPrivate ? {} : { lookup: publicOnlyLookup }),
        signal: AbortSignal.timeout(DELIVERY_TIMEOUT_MS),
      },
      (res) => {
        res.resume();
        res.on('end', () => done({ statusCode: res.statusCode ?? 0 }));
        res.on('error', (err) => done({ error: String(err) }));
      },
    );
    req.on('error', (err) => done({ error: err.name === 'AbortError' ? `no answer within ${DELIVERY_TIMEOUT_MS} ms` : err.message }));
    req.end(body);
  });
}
