import { spawnSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../infra/config.ts';

describe('configuration', () => {
  it('has working defaults for a single-machine run', () => {
    const config = loadConfig({});
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
    });
    expect(config.PORT).toBe(8080);
    expect(config.publicBaseUrl).toBe('https://mem.example.com');
    expect(config.WEBHOOK_ALLOW_PRIVATE_TARGETS).toBe(true);
    expect(config.WEBHOOK_RETRY_SCHEDULE).toEqual([0, 1, 2]);
    expect(config.WRITE_RATE_LIMIT_PER_MINUTE).toBe(0);
    expect(config.SMTP_URL).toBeUndefined();
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
  ])('names the variable at fault: %s=%s', (name, value) => {
    expect(() => loadConfig({ [name]: value })).toThrow(ConfigError);
    expect(() => loadConfig({ [name]: value })).toThrow(new RegExp(`${name}=`));
  });

  it('stops the process with a message naming the variable', () => {
    for (const entry of ['api/main.ts', 'temporal/worker-main.ts', 'infra/migrate.ts']) {
      const run = spawnSync(process.execPath, [entry], { env: { ...process.env, PORT: 'abc', SERVICE_MODE: 'nope' }, encoding: 'utf8', timeout: 20_000 });
      expect(run.status, entry).toBe(78);
      expect(run.stderr).toContain('PORT="abc"');
      expect(run.stderr).toContain('SERVICE_MODE="nope"');
    }
  });
});
