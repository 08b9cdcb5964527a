import { createHash, randomUUID } from 'node:crypto';
import { get, type IncomingMessage } from 'node:http';
import { parse } from 'csv-parse/sync';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { copyOut } from '../../domain/copy-out.ts';
import { query, sql } from '../../domain/sql.ts';
import { eventually, signUp, startStack, type SignedUp, type Stack } from '../support/stack.ts';

let stack: Stack;
let a: SignedUp;
const ids: string[] = [];
beforeAll(async () => {
  stack = await startStack({ env: { WRITE_RATE_LIMIT_PER_MINUTE: '0' } });
  a = await signUp(stack.api);
  await stack.orm.em.fork().getConnection().execute(`update orgs set plan = 'team' where id = ?`, [a.org.id]);
  // 2,100 memories: three pages of 1,000, the last partial.
  const contents = Array.from({ length: 2100 }, (_, i) => ({
    content: i === 7 ? 'quote " comma , newline \n end' : `memory number ${i}`,
    namespace: i % 2 ? 'odd' : 'even',
    tags: [`t${i % 3}`],
    metadata: { i },
  }));
  for (let i = 0; i < contents.length; i += 50) {
    const batch = await Promise.all(contents.slice(i, i + 50).map((body) => stack.api.post('/api/memories', { token: a.token, body })));
    ids.push(...batch.map((r) => r.body.id as string));
  }
}, 120_000);
afterAll(async () => stack?.close());

const waitDone = (id: string, token = a.token) =>
  eventually(async () => {
    const res = await stack.api.get(`/api/memories/exports/${id}`, { token });
    return res.body.status !== 'pending' ? res.body : undefined;
  }, 60_000);

describe('exports', () => {
  it('exports ndjson: one memory row per line, every row, with payload and download_url', async () => {
    const started = await stack.api.post('/api/memories/exports', { token: a.token, body: { format: 'ndjson' } });
    expect(started.status).toBe(202);
    expect(started.body).toMatchObject({ status: 'pending', format: 'ndjson', row_count: 0, download_url: null, completed_at: null });
    const done = await waitDone(started.body.id);
    expect(done).toMatchObject({
      status: 'completed',
      row_count: 2100,
      error: null,
      download_url: `${stack.config.publicBaseUrl}/api/memories/exports/${started.body.id}/download`,
    });
    const lines = done.payload
      .trimEnd()
      .split('\n')
      .map((l: string) => JSON.parse(l));
    expect(lines).toHaveLength(2100);
    expect(new Set(lines.map((l: { id: string }) => l.id))).toEqual(new Set(ids));
    expect(Object.keys(lines[0]).sort()).toEqual([
      'content',
      'created_at',
      'id',
      'metadata',
      'namespace',
      'occurred_at',
      'source',
      'source_ref',
      'tags',
      'updated_at',
    ]);

    const file = await fetch(`${stack.baseUrl}${new URL(done.download_url).pathname}`, { headers: { authorization: `Bearer ${a.token}` } });
    expect(file.status).toBe(200);
    expect(file.headers.get('content-type')).toMatch(/application\/x-ndjson/);
    expect(file.headers.get('content-disposition')).toMatch(/attachment; filename="memories-.*\.ndjson"/);
    expect(await file.text()).toBe(done.payload);
    expect(done.size_bytes).toBe(Buffer.byteLength(done.payload));
  });

  it('carries the file inline up to EXPORT_INLINE_MAX_BYTES, and above it only at download_url', async () => {
    const started = await stack.api.post('/api/memories/exports', {
      token: a.token,
      body: { format: 'ndjson', filters: { namespace: 'odd' } },
    });
    const done = await waitDone(started.body.id);
    const size: number = done.size_bytes;
    expect(size).toBe(Buffer.byteLength(done.payload));
    // Two more API processes over the same database, one whose limit is exactly the file's size, one a byte less.
    for (const [limit, inline] of [
      [size, true],
      [size - 1, false],
    ] as const) {
      const api = await startStack({
        databaseUrl: stack.config.DATABASE_URL,
        worker: false,
        relay: false,
        env: { EXPORT_INLINE_MAX_BYTES: String(limit) },
      });
      try {
        const polled = await api.api.get(`/api/memories/exports/${done.id}`, { token: a.token });
        expect(polled.status).toBe(200);
        expect(polled.body).toMatchObject({ status: 'completed', size_bytes: size, download_url: done.download_url });
        expect(polled.body.payload).toBe(inline ? done.payload : null);
        const file = await fetch(`${api.baseUrl}${new URL(done.download_url).pathname}`, {
          headers: { authorization: `Bearer ${a.token}` },
        });
        expect(await file.text()).toBe(done.payload);
      } finally {
        await api.close();
      }
    }
  });

  it('exports real CSV with the list filters', async () => {
    const started = await stack.api.post('/api/memories/exports', {
      token: a.token,
      body: { format: 'csv', filters: { namespace: 'odd', tags: ['t1'] } },
    });
    const done = await waitDone(started.body.id);
    expect(done.filters).toEqual({ namespace: 'odd', tags: ['t1'] });
    const expected = Array.from({ length: 2100 }, (_, i) => i).filter((i) => i % 2 === 1 && i % 3 === 1).length;
    expect(done.row_count).toBe(expected);
    const text: string = done.payload;
    expect(
      text.startsWith('id,content,namespace,tags,source,source_ref,metadata,created_at,updated_at,user_id,agent_id,run_id,occurred_at\n'),
    ).toBe(true);
    const rows = parse(text, { columns: true }) as Record<string, string>[];
    expect(rows).toHaveLength(expected);
    expect(rows.every((r) => r.namespace === 'odd' && JSON.parse(r.tags!).includes('t1'))).toBe(true);
    const quoted = await stack.api.post('/api/memories/exports', {
      token: a.token,
      body: { format: 'csv', filters: { metadata_filter: { i: 7 } } },
    });
    const q = await waitDone(quoted.body.id);
    expect(q.row_count).toBe(1);
    expect(q.payload).toContain('"quote "" comma , newline \n end"');
  });

  it('lists the most recent jobs without payload, and guards every route', async () => {
    const list = await stack.api.get('/api/memories/exports', { token: a.token });
    expect(list.status).toBe(200);
    expect(list.body.exports.length).toBeGreaterThanOrEqual(3);
    expect(list.body.exports[0].payload).toBeUndefined();
    const times = list.body.exports.map((e: { created_at: number }) => e.created_at);
    expect([...times].sort((x, y) => y - x)).toEqual(times);

    const b = await signUp(stack.api);
    const id = list.body.exports[0].id;
    expect((await stack.api.get(`/api/memories/exports/${id}`, { token: b.token })).status).toBe(404);
    expect((await stack.api.get(`/api/memories/exports/${id}/download`, { token: b.token })).status).toBe(404);
    expect((await stack.api.get('/api/memories/exports', { token: b.token })).body.exports).toEqual([]);
    expect((await stack.api.post('/api/memories/exports', { token: a.token, body: { format: 'xml' } })).status).toBe(400);
    expect(
      (await stack.api.post('/api/memories/exports', { token: a.token, body: { format: 'csv', filters: { namespace: '' } } })).status,
    ).toBe(400);
    const empty = await stack.api.post('/api/memories/exports', { token: b.token, body: { format: 'ndjson' } });
    expect((await waitDone(empty.body.id, b.token)).row_count).toBe(0);
    const nothing = await fetch(`${stack.baseUrl}/api/memories/exports/${empty.body.id}/download`, {
      headers: { authorization: `Bearer ${b.token}` },
    });
    expect([nothing.status, nothing.headers.get('content-length'), await nothing.text()]).toEqual([200, '0', '']);
  });
});

describe('a large export downloaded', () => {
  // A finished export of 48 pages of 1 MB each, with text of several bytes a character, stored as the workflow
  // stores its pages: far more than the sockets between PostgreSQL, the API and the client hold.
  let exportId: string;
  beforeAll(async () => {
    exportId = randomUUID();
    const em = stack.orm.em.fork();
    await query(
      em,
      sql`insert into export_jobs (id, org_id, format, filters, status, row_count, created_at, completed_at)
        values (${exportId}, ${a.org.id}, 'ndjson', '{}', 'completed', 48000, now(), now())`,
    );
    await query(
      em,
      sql`insert into export_chunks (org_id, export_id, seq, data)
          select ${a.org.id}, ${exportId}, seq, repeat(format('{"page":%s,"content":"naïve café ☕ 🦜"}' || chr(10), seq), 25000)
          from generate_series(0, 47) seq`,
    );
  });
  const download = (signal?: AbortSignal) =>
    fetch(`${stack.baseUrl}/api/memories/exports/${exportId}/download`, {
      headers: { authorization: `Bearer ${a.token}` },
      ...(signal ? { signal } : {}),
    });

  it('streams every byte in order, with its Content-Length', async () => {
    const [stored] = await query(
      stack.orm.em.fork(),
      sql<{
        bytes: string;
        digest: string;
      }>`select sum(octet_length(data))::bigint as bytes,
               encode(sha256(convert_to(string_agg(data, '' order by seq), 'UTF8')), 'hex') as digest
          from export_chunks where org_id = ${a.org.id} and export_id = ${exportId}`,
    );
    const file = await download();
    expect(file.status).toBe(200);
    expect(file.headers.get('content-length')).toBe(stored!.bytes);
    const body = Buffer.from(await file.arrayBuffer());
    expect(body.length).toBe(Number(stored!.bytes));
    expect(createHash('sha256').update(body).digest('hex')).toBe(stored!.digest);
  });

  it('holds no connection while its client reads slowly, so slow downloads never starve the API', async () => {
    // More downloads than the stack's pool has connections (5), none of them read: each stalls once the sockets'
    // buffers are full, with most of its file still to send. (A COPY of the whole file held its connection so.)
    const stalled: IncomingMessage[] = [];
    for (let i = 0; i < 8; i++) {
      const file = await new Promise<IncomingMessage>((resolve, reject) =>
        get(`${stack.baseUrl}/api/memories/exports/${exportId}/download`, { headers: { authorization: `Bearer ${a.token}` } }, resolve).on(
          'error',
          reject,
        ),
      );
      expect(file.statusCode).toBe(200);
      stalled.push(file);
    }
    expect((await stack.api.get('/api/memories/exports', { token: a.token })).status).toBe(200);
    const whole = await download();
    expect((await whole.arrayBuffer()).byteLength).toBe(Number(whole.headers.get('content-length')));
    for (const file of stalled) file.destroy();
  });

  it('gives its connection back when the client leaves in the middle, so downloads never exhaust the pool', async () => {
    // Twice as many downloads as the stack's pool has connections (5), each left after its first bytes.
    for (let i = 0; i < 10; i++) {
      const leave = new AbortController();
      const file = await download(leave.signal);
      const reader = file.body!.getReader();
      expect((await reader.read()).done).toBe(false);
      leave.abort();
    }
    // An abandoned download leaves no COPY running, and the API still answers.
    await eventually(async () => {
      const [running] = await query(
        stack.orm.em.fork(),
        sql<{
          n: number;
        }>`select count(*)::int as n from pg_stat_activity where query like 'copy (select data from export_chunks%' and state <> 'idle'`,
      );
      return running!.n === 0;
    });
    expect((await stack.api.get('/api/memories/exports', { token: a.token })).status).toBe(200);
    const whole = await download();
    expect((await whole.arrayBuffer()).byteLength).toBe(Number(whole.headers.get('content-length')));
  });
});

describe('copyOut', () => {
  it("refuses bound parameters, and fails its stream with the database's error, giving the connection back", async () => {
    const em = stack.orm.em.fork();
    await expect(copyOut(em, sql`select ${'a'}::text`)).rejects.toThrow(/no bound parameters/);
    // More failures than the pool has connections (5): none of them keeps one.
    for (let i = 0; i < 8; i++)
      await expect((await copyOut(em, sql`select (1 / (g - 3))::text from generate_series(1, 5) g`)).toArray()).rejects.toThrow(
        /division by zero/,
      );
    expect(Buffer.concat(await (await copyOut(em, sql`select g::text from generate_series(1, 3) g`)).toArray()).toString()).toBe('123');
  });
});

describe('a failing export', () => {
  it('ends failed with the reason when its pages cannot be written', async () => {
    const { requestExport } = await import('../../domain/exports/exports.ts');
    const caller = {
      userId: a.user.id,
      orgId: a.org.id,
      role: 'owner' as const,
      plan: 'team' as const,
      credentialId: null,
      credentialKind: 'api' as const,
    };
    // A stored job whose filters no longer make sense (as after a change of their format).
    const job = await requestExport(stack.orm.em.fork(), caller, 'ndjson', { createdAfter: 'yesterday' as unknown as number }, 0);
    const done = await waitDone(job.id);
    expect(done.status).toBe('failed');
    expect(done.error).toMatch(/cannot be applied/);
    expect(done.download_url).toBeNull();
    expect(done.payload).toBeNull();
    expect((await stack.api.get(`/api/memories/exports/${job.id}/download`, { token: a.token })).body.error).toBe('export_not_ready');
  });
});
