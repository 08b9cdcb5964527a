import { createServer, type Server } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort } from '../support/ports.ts';
import { startStack, uniqueEmail, type Stack } from '../support/stack.ts';

// A local siteverify endpoint: the token `pass` succeeds, anything else fails; records what it received.
let verifier: Server;
const seen: URLSearchParams[] = [];
let stack: Stack;
let down: Stack;
beforeAll(async () => {
  const port = await freePort();
  verifier = createServer((req, res) => {
    let body = '';
    req.on('data', (c) => (body += c));
    req.on('end', () => {
      const form = new URLSearchParams(body);
      seen.push(form);
      const ok =
        req.headers['content-type']?.startsWith('application/x-www-form-urlencoded') &&
        form.get('secret') === 'captcha-secret' &&
        form.get('response') === 'pass';
      res.setHeader('content-type', 'application/json');
      res.end(JSON.stringify(ok ? { success: true } : { success: false, 'error-codes': ['invalid-input-response'] }));
    });
  });
  await new Promise<void>((r) => verifier.listen(port, '127.0.0.1', () => r()));
  const env = { CAPTCHA_SECRET: 'captcha-secret', CAPTCHA_VERIFY_URL: `http://127.0.0.1:${port}/siteverify` };
  stack = await startStack({ relay: false, env });
  down = await startStack({
    relay: false,
    worker: false,
    env: { ...env, CAPTCHA_VERIFY_URL: `http://127.0.0.1:${await freePort()}/siteverify` },
    databaseUrl: stack.config.DATABASE_URL,
  });
});
afterAll(async () => {
  await stack?.close();
  await down?.close();
  verifier?.close();
});

const body = (captchaToken?: string) => ({
  email: uniqueEmail('captcha'),
  password: 'long enough pw',
  name: 'C',
  org_name: 'Captcha Co',
  ...(captchaToken ? { captchaToken } : {}),
});

describe('captcha at signup', () => {
  it('requires a captcha token when CAPTCHA_SECRET is set', async () => {
    const res = await stack.api.post('/api/auth/signup', { body: body() });
    expect(res.status).toBe(400);
    expect(res.body.error).toBe('captcha_required');
  });

  it('refuses a failed captcha with 400 and accepts a solved one', async () => {
    const failed = await stack.api.post('/api/auth/signup', { body: body('fail') });
    expect(failed.status).toBe(400);
    expect(failed.body).toMatchObject({ error: 'captcha_failed', codes: ['invalid-input-response'] });
    const ok = await stack.api.post('/api/auth/signup', { body: body('pass') });
    expect(ok.status).toBe(201);
    const last = seen.at(-1)!;
    expect(last.get('secret')).toBe('captcha-secret');
    expect(last.get('response')).toBe('pass');
    expect(last.get('remoteip')).toMatch(/127\.0\.0\.1/);
  });

  it('answers 503 captcha_unavailable when the verifier cannot be reached', async () => {
    const res = await down.api.post('/api/auth/signup', { body: body('pass') });
    expect(res.status).toBe(503);
    expect(res.body.error).toBe('captcha_unavailable');
  });
});
