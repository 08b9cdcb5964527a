import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { inject } from 'vitest';
import { query, sql } from '../../domain/sql.ts';
import { loadConfig } from '../../infra/config.ts';
import { openOrm } from '../../infra/orm.ts';
import { connectClient } from '../../temporal/client.ts';
import { makeCertificates, type Certificates } from '../support/certificates.ts';
import { createTestDatabase } from '../support/database.ts';
import { eventually, signUp, startStack, type Stack } from '../support/stack.ts';
import { TlsProxy } from '../support/tls-proxy.ts';

// The whole service over TLS, configured as docs/operations.md says: PostgreSQL that accepts TLS connections
// only (sslmode=verify-full in DATABASE_URL), and Temporal behind TLS that requires a client certificate (mTLS).
let dir: string;
let certs: Certificates;
let pgProxy: TlsProxy;
let temporalProxy: TlsProxy;
let plainUrl: URL;
let databaseUrl: string;
let stack: Stack;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'memsvc-tls-'));
  certs = await makeCertificates(dir);
  plainUrl = new URL(await createTestDatabase());
  pgProxy = await TlsProxy.postgres(plainUrl.host, certs);
  const url = new URL(plainUrl);
  url.host = pgProxy.address.replace('127.0.0.1', 'localhost');
  databaseUrl = `${url}?sslmode=verify-full&sslrootcert=${encodeURIComponent(certs.ca)}`;
  temporalProxy = await TlsProxy.grpc(inject('temporalAddress'), certs);
  stack = await startStack({
    databaseUrl,
    env: {
      TEMPORAL_ADDRESS: temporalProxy.address,
      TEMPORAL_TLS_CA_PATH: certs.ca,
      TEMPORAL_TLS_CERT_PATH: certs.client.cert,
      TEMPORAL_TLS_KEY_PATH: certs.client.key,
    },
  });
}, 120_000);
afterAll(async () => {
  await stack?.close();
  await Promise.all([pgProxy?.close(), temporalProxy?.close()]);
  if (dir) await rm(dir, { recursive: true, force: true });
});

describe('TLS to PostgreSQL and mutual TLS to Temporal', () => {
  it('runs sign-up, saves and an export through both', async () => {
    const a = await signUp(stack.api); // a workflow the request waits for
    const saved = await stack.api.post('/api/memories', { token: a.token, body: { content: 'encrypted all the way' } });
    expect(saved.status).toBe(201);
    const started = await stack.api.post('/api/memories/exports', { token: a.token, body: { format: 'ndjson' } });
    const done = await eventually(async () => {
      const res = await stack.api.get(`/api/memories/exports/${started.body.id}`, { token: a.token });
      return res.body.status === 'completed' ? res.body : undefined;
    }, 30_000);
    expect(done.row_count).toBe(1);
    // Every connection the service opened (its pool and the relay's LISTEN) began with TLS.
    expect(pgProxy.refused).toBe(0);
  });

  it('is refused without what TLS asks for', async () => {
    const proxied = new URL(plainUrl);
    proxied.host = pgProxy.address.replace('127.0.0.1', 'localhost');
    const plain = new pg.Client({ connectionString: proxied.toString() });
    await expect(plain.connect()).rejects.toThrow();
    expect(pgProxy.refused).toBe(1);
    const otherCa = await makeCertificates(await mkdtemp(join(dir, 'other-')), 'someone-else');
    const wrongCa = new pg.Client({ connectionString: `${proxied}?sslmode=verify-full&sslrootcert=${encodeURIComponent(otherCa.ca)}` });
    await expect(wrongCa.connect()).rejects.toThrow(/certificate/);
    const right = await openOrm({ databaseUrl, poolMax: 1 });
    expect(await query(right.em.fork(), sql<{ ok: number }>`select 1 as ok`)).toEqual([{ ok: 1 }]);
    await right.close();

    const reach = (env: Record<string, string>) => {
      const config = loadConfig({ DATABASE_URL: databaseUrl, SERVICE_MODE: 'local', TEMPORAL_ADDRESS: temporalProxy.address, ...env });
      const client = connectClient(config.temporal, config.TEMPORAL_NAMESPACE, config.codecKeys);
      // A refused handshake is retried by the client as a network error: a deadline ends the attempt.
      return client.connection
        .withDeadline(Date.now() + 2_000, () => client.workflowService.getSystemInfo({}))
        .finally(() => client.connection.close());
    };
    await expect(
      reach({ TEMPORAL_TLS_CA_PATH: certs.ca, TEMPORAL_TLS_CERT_PATH: certs.client.cert, TEMPORAL_TLS_KEY_PATH: certs.client.key }),
    ).resolves.toBeDefined();
    // No client certificate, or a server this CA did not sign, or no TLS at all.
    await expect(reach({ TEMPORAL_TLS_CA_PATH: certs.ca })).rejects.toThrow();
    await expect(
      reach({ TEMPORAL_TLS_CA_PATH: otherCa.ca, TEMPORAL_TLS_CERT_PATH: otherCa.client.cert, TEMPORAL_TLS_KEY_PATH: otherCa.client.key }),
    ).rejects.toThrow();
    await expect(reach({})).rejects.toThrow();
  });
});
