import proto from '@temporalio/proto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { query, sql } from '../../domain/sql.ts';
import { eventually, signUp, startStack, uniqueEmail, type Stack } from '../support/stack.ts';

const { temporal } = proto;
type Payload = { metadata?: Record<string, Uint8Array> | null; data?: Uint8Array | null };

// Temporal's history must hold no e-mail, password hash or token hash in clear; operators read it through
// the codec endpoint the Web UI calls.
const operatorEmail = uniqueEmail('operator');
let stack: Stack;
beforeAll(async () => {
  stack = await startStack({
    env: { OPERATOR_EMAILS: `someone@example.test, ${operatorEmail.toUpperCase()}`, TEMPORAL_UI_ORIGIN: 'http://127.0.0.1:8233' },
  });
});
afterAll(async () => stack?.close());

// The whole history of a workflow the relay starts from the outbox, once it has ended.
const historyOf = async (workflowId: string) => {
  await eventually(() =>
    stack.temporal.workflow
      .getHandle(workflowId)
      .result()
      .then(
        () => true,
        () => false,
      ),
  );
  const res = await stack.temporal.workflowService.getWorkflowExecutionHistory({
    namespace: stack.config.TEMPORAL_NAMESPACE,
    execution: { workflowId },
  });
  return res.history!;
};

// Every payload anywhere in the history, found by walking the decoded protobuf objects, with its path.
function payloadsIn(value: unknown, found: { path: string; payload: Payload }[] = [], path = ''): { path: string; payload: Payload }[] {
  if (value instanceof Uint8Array || value === null || typeof value !== 'object') return found;
  if ('metadata' in value && 'data' in value && (value as { data: unknown }).data instanceof Uint8Array) {
    found.push({ path, payload: value as Payload });
    return found;
  }
  for (const [k, v] of Object.entries(value)) payloadsIn(v, found, `${path}.${k}`);
  return found;
}

const asJson = (p: Payload) => ({
  metadata: Object.fromEntries(Object.entries(p.metadata ?? {}).map(([k, v]) => [k, Buffer.from(v).toString('base64')])),
  data: Buffer.from(p.data ?? []).toString('base64'),
});

describe('workflow payloads in Temporal', () => {
  it('are encrypted: the sign-up mail history holds no e-mail, password hash or token hash', async () => {
    const a = await signUp(stack.api, { email: operatorEmail });
    const history = await historyOf(`verification-mail-signup-${a.org.id}`);
    const raw = Buffer.from(temporal.api.history.v1.History.encode(history).finish());
    const [user] = await query(
      stack.orm.em.fork(),
      sql<{ password_hash: string }>`select password_hash from users where id = ${a.user.id}`,
    );
    const [token] = await query(
      stack.orm.em.fork(),
      sql<{ secret_hash: string }>`select secret_hash from credentials where id = ${a.tokenId}`,
    );
    expect(raw.includes(operatorEmail)).toBe(false);
    expect(raw.includes(user!.password_hash)).toBe(false);
    expect(raw.includes(token!.secret_hash)).toBe(false);

    // Two kinds stay plain, and hold no user data: search attributes (OrgId), which the server indexes, and the
    // OpenTelemetry interceptors' header (W3C trace context and baggage: the trace and request ids).
    const all = payloadsIn(history);
    const traceHeaders = all.filter((p) => p.path.endsWith('header.fields._tracer-data'));
    expect(traceHeaders.length).toBeGreaterThan(0);
    for (const { payload } of traceHeaders)
      expect(Object.keys(JSON.parse(Buffer.from(payload.data!).toString())).sort()).toEqual(['baggage', 'traceparent']);
    const payloads = all.filter((p) => !p.path.includes('searchAttributes') && !traceHeaders.includes(p)).map((p) => p.payload);
    expect(payloads.length).toBeGreaterThan(2);
    for (const p of payloads) expect(Buffer.from(p.metadata!.encoding!).toString()).toBe('binary/encrypted');
  });

  it('are readable through the codec endpoint by operators only', async () => {
    const operator = await stack.api.post('/api/auth/login', { body: { email: operatorEmail, password: 'correct horse battery' } });
    expect(operator.status).toBe(200);
    const opUser = (await stack.api.get('/api/auth/me', { cookie: operator.cookie })).body.user;
    const opOrgId = (await stack.api.get('/api/auth/me', { cookie: operator.cookie })).body.org.id as string;
    const history = await historyOf(`verification-mail-signup-${opOrgId}`);
    const payloads = payloadsIn(history)
      .filter((p) => !p.path.includes('searchAttributes') && !p.path.endsWith('_tracer-data'))
      .map((p) => asJson(p.payload));
    const decode = (auth: { cookie?: string; token?: string }, headers: Record<string, string> = {}) =>
      stack.api.post('/api/temporal/codec/decode', { ...auth, body: { payloads }, headers: { 'x-namespace': 'default', ...headers } });

    // Listed but not verified yet: a sign-up with an operator's address gets nothing.
    const unverified = await decode({ cookie: operator.cookie });
    expect(unverified.status).toBe(403);
    expect(unverified.body.error).toBe('operator_required');
    await query(stack.orm.em.fork(), sql`update users set email_verified_at = now() where id = ${opUser.id}`);

    // Called from the Web UI's origin with the operator's cookie: allowed, and readable by that origin.
    const decoded = await decode({ cookie: operator.cookie }, { origin: 'http://127.0.0.1:8233', 'sec-fetch-site': 'same-site' });
    expect(decoded.status).toBe(200);
    expect(decoded.headers.get('access-control-allow-origin')).toBe('http://127.0.0.1:8233');
    expect(decoded.headers.get('access-control-allow-credentials')).toBe('true');
    expect(decoded.body.payloads).toHaveLength(payloads.length);
    const clear = decoded.body.payloads.map((p: { data: string }) => Buffer.from(p.data, 'base64').toString()).join('\n');
    expect(clear).toContain(`"mailKey":"signup-${opOrgId}"`);
    expect(Buffer.from(decoded.body.payloads[0].metadata.encoding, 'base64').toString()).toMatch(/^json\//);

    // Encoding what an operator sends gives what the worker can read back.
    const encoded = await stack.api.post('/api/temporal/codec/encode', {
      cookie: operator.cookie,
      body: { payloads: decoded.body.payloads.slice(0, 1) },
    });
    expect(encoded.status).toBe(200);
    expect(Buffer.from(encoded.body.payloads[0].metadata.encoding, 'base64').toString()).toBe('binary/encrypted');
    const roundTrip = await stack.api.post('/api/temporal/codec/decode', { cookie: operator.cookie, body: encoded.body });
    expect(roundTrip.body.payloads[0]).toEqual(decoded.body.payloads[0]);

    // Any other member of the service is not an operator; nobody without a credential is either.
    const other = await signUp(stack.api);
    expect((await decode({ token: other.token })).status).toBe(403);
    // Refused before its body is read: a body that does not even parse gets the same answer.
    const unparsed = await fetch(`${stack.baseUrl}/api/temporal/codec/decode`, {
      method: 'POST',
      headers: { authorization: `Bearer ${other.token}`, 'content-type': 'application/json' },
      body: '{"payloads": [',
    });
    expect(unparsed.status).toBe(403);
    expect(((await unparsed.json()) as { error: string }).error).toBe('operator_required');
    expect((await decode({})).status).toBe(401);

    // Broken input is a 400, never a 500.
    const tampered = { payloads: [{ ...payloads[0]!, data: Buffer.from('not what was sealed').toString('base64') }] };
    const bad = await stack.api.post('/api/temporal/codec/decode', { cookie: operator.cookie, body: tampered });
    expect(bad.status).toBe(400);
    expect(bad.body.error).toBe('payload_undecryptable');
    expect(
      (await stack.api.post('/api/temporal/codec/decode', { cookie: operator.cookie, body: { payloads: [{ data: '***' }] } })).status,
    ).toBe(400);
  });

  it('answers the Web UI preflight for its origin only', async () => {
    const preflight = (origin: string) =>
      fetch(`${stack.baseUrl}/api/temporal/codec/decode`, {
        method: 'OPTIONS',
        headers: { origin, 'access-control-request-method': 'POST', 'access-control-request-headers': 'content-type,x-namespace' },
      });
    const ui = await preflight('http://127.0.0.1:8233');
    expect(ui.status).toBe(204);
    expect(ui.headers.get('access-control-allow-origin')).toBe('http://127.0.0.1:8233');
    expect(ui.headers.get('access-control-allow-headers')).toContain('x-namespace');
    const other = await preflight('https://evil.example');
    expect(other.headers.get('access-control-allow-origin')).not.toBe('https://evil.example');
    // No other route answers preflights: the API is not meant to be called cross-origin with cookies.
    const elsewhere = await fetch(`${stack.baseUrl}/api/memories`, {
      method: 'OPTIONS',
      headers: { origin: 'http://127.0.0.1:8233', 'access-control-request-method': 'POST' },
    });
    expect(elsewhere.headers.get('access-control-allow-origin')).toBeNull();
  });
});
