import { spawnSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../infra/config.ts';

describe('configuration', () => {
  const secrets = {
    BYOK_ESCROW_KEY: 'b'.repeat(43),
    TEMPORAL_CODEC_KEYS: `dev1:${Buffer.alloc(32, 1).toString('base64')}`,
    METRICS_TOKEN: 'm'.repeat(32),
  };

  it('has working defaults for a single-machine run', () => {
    const config = loadConfig(secrets);
    expect(config).toMatchObject({
      PORT: 3000,
      HOST: '127.0.0.1',
      TEMPORAL_ADDRESS: '127.0.0.1:7233',
      TEMPORAL_NAMESPACE: 'default',
      SERVICE_MODE: 'hosted',
      WEBHOOK_ALLOW_PRIVATE_TARGETS: false,
      WEBHOOK_RETRY_SCHEDULE: [0, 5, 300, 1800, 7200, 18000, 36000, 36000],
      WRITE_RATE_LIMIT_PER_MINUTE: 60,
      LLM_PRIMARY_PROVIDER: 'anthropic',
      LLM_ALTERNATE_PROVIDER: 'openai',
    });
    expect(config.publicBaseUrl).toBe('http://127.0.0.1:3000');
    expect(config.STRIPE_SECRET_KEY).toBeUndefined();
    expect(config.codecKeys).toEqual([{ id: 'dev1', key: Buffer.alloc(32, 1) }]);
    expect(config.temporalUiOrigin).toBe('http://127.0.0.1:8233');
  });

  it('reaches Temporal over TLS when any TLS setting or an API key is given, reading the files once', () => {
    expect(loadConfig(secrets).temporal).toEqual({ address: '127.0.0.1:7233', tls: false });
    expect(loadConfig({ ...secrets, TEMPORAL_TLS: 'true' }).temporal.tls).toEqual({
      ca: undefined,
      cert: undefined,
      key: undefined,
      serverName: undefined,
    });
    const cloud = loadConfig({
      ...secrets,
      TEMPORAL_ADDRESS: 'us-east-1.aws.api.temporal.io:7233',
      TEMPORAL_NAMESPACE: 'acme.a1b2c',
      TEMPORAL_API_KEY: 'key-1',
    });
    expect(cloud.temporal).toMatchObject({
      address: 'us-east-1.aws.api.temporal.io:7233',
      apiKey: 'key-1',
      tls: { serverName: undefined },
    });
    const withCa = loadConfig({ ...secrets, TEMPORAL_TLS_CA_PATH: 'package.json', TEMPORAL_TLS_SERVER_NAME: 'temporal.internal' });
    expect(withCa.temporal.tls).toMatchObject({ ca: expect.any(Buffer), serverName: 'temporal.internal' });
    expect(() => loadConfig({ ...secrets, TEMPORAL_TLS_CERT_PATH: 'package.json' })).toThrow(/mTLS needs both/);
    expect(() => loadConfig({ ...secrets, TEMPORAL_TLS_CA_PATH: '/nonexistent/ca.pem' })).toThrow(
      /TEMPORAL_TLS_CA_PATH="\/nonexistent\/ca.pem": cannot be read/,
    );
  });

  it('refuses to run hosted on keys derived from the database address, or with its metrics open', () => {
    expect(() => loadConfig({})).toThrow(
      /BYOK_ESCROW_KEY="".*hosted mode needs its own secret[\s\S]*TEMPORAL_CODEC_KEYS=""[\s\S]*METRICS_TOKEN=""/,
    );
    expect(() => loadConfig({ BYOK_ESCROW_KEY: secrets.BYOK_ESCROW_KEY })).toThrow(/TEMPORAL_CODEC_KEYS=""/);
    expect(() => loadConfig({ BYOK_ESCROW_KEY: secrets.BYOK_ESCROW_KEY, TEMPORAL_CODEC_KEYS: secrets.TEMPORAL_CODEC_KEYS })).toThrow(
      /METRICS_TOKEN=""/,
    );
    // Local mode derives development keys, as before.
    expect(loadConfig({ SERVICE_MODE: 'local' }).codecKeys).toHaveLength(1);
  });

  it('reads codec keys in rotation order and refuses malformed ones', () => {
    const a = Buffer.alloc(32, 2).toString('base64');
    const b = Buffer.alloc(32, 3).toString('base64');
    expect(loadConfig({ ...secrets, TEMPORAL_CODEC_KEYS: `new:${a}, old:${b}` }).codecKeys.map((k) => k.id)).toEqual(['new', 'old']);
    for (const bad of ['nokey', `a:${Buffer.alloc(16).toString('base64')}`, `a:${a},a:${b}`, `bad id:${a}`]) {
      expect(() => loadConfig({ ...secrets, TEMPORAL_CODEC_KEYS: bad }), bad).toThrow(/TEMPORAL_CODEC_KEYS=/);
    }
  });

  it('parses the documented names', () => {
    const config = loadConfig({
      PORT: '8080',
      PUBLIC_BASE_URL: 'https://mem.example.com/',
      WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true',
      WEBHOOK_RETRY_SCHEDULE: '0, 1,2',
      WRITE_RATE_LIMIT_PER_MINUTE: '0',
      SERVICE_MODE: 'local',
      SMTP_URL: '',
      EMBEDDING_LOCAL_MODEL: 'e5-small-v2',
      ORG_BUSY_SHARE: '0.5',
    });
    expect(config.PORT).toBe(8080);
    expect(config.publicBaseUrl).toBe('https://mem.example.com');
    expect(config.WEBHOOK_ALLOW_PRIVATE_TARGETS).toBe(true);
    expect(config.WEBHOOK_RETRY_SCHEDULE).toEqual([0, 1, 2]);
    expect(config.WRITE_RATE_LIMIT_PER_MINUTE).toBe(0);
    expect(config.SMTP_URL).toBeUndefined();
    expect(config.EMBEDDING_LOCAL_MODEL).toBe('e5-small-v2');
    expect(config.ORG_BUSY_SHARE).toBe(0.5);
    expect(loadConfig(secrets).EMBEDDING_LOCAL_MODEL).toBe('bge-small-en-v1.5');
  });

  it.each([
    ['PORT', 'eighty'],
    ['PORT', '70000'],
    ['SERVICE_MODE', 'cloud'],
    ['DATABASE_URL', 'not a url'],
    ['WEBHOOK_RETRY_SCHEDULE', '1,,2'],
    ['WEBHOOK_ALLOW_PRIVATE_TARGETS', 'maybe'],
    ['LLM_PRIMARY_PROVIDER', 'gemini'],
    ['WRITE_RATE_LIMIT_PER_MINUTE', '-1'],
    ['EMBEDDING_LOCAL_MODEL', 'all-minilm-l6-v2'],
    ['ORG_BUSY_SHARE', '0'],
    ['ORG_BUSY_SHARE', '1.5'],
  ])('names the variable at fault: %s=%s', (name, value) => {
    expect(() => loadConfig({ [name]: value })).toThrow(ConfigError);
    expect(() => loadConfig({ [name]: value })).toThrow(new RegExp(`${name}=`));
  });

  it('stops the process with a message naming the variable', () => {
    for (const entry of ['api/main.ts', 'temporal/worker-main.ts', 'infra/migrate.ts']) {
      const run = spawnSync(process.execPath, [entry], {
        env: { ...process.env, PORT: 'abc', SERVICE_MODE: 'nope' },
        encoding: 'utf8',
        timeout: 20_000,
      });
      expect(run.status, entry).toBe(78);
      expect(run.stderr).toContain('PORT="abc"');
      expect(run.stderr).toContain('SERVICE_MODE="nope"');
    }
  });
});
