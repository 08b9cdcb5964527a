import { describe, expect, it } from 'vitest';
import { checkTarget, isPublicAddress } from '../../domain/webhooks/targets.ts';

describe('webhook target addresses', () => {
  it.each([
    '127.0.0.1',
    '127.1.2.3',
    '10.0.0.1',
    '172.16.5.4',
    '172.31.255.255',
    '192.168.1.1',
    '169.254.169.254',
    '100.64.0.1',
    '0.0.0.0',
    '224.0.0.1',
    '255.255.255.255',
    '::1',
    '::',
    'fe80::1',
    'fc00::1',
    'fd12:3456::1',
    '::ffff:127.0.0.1',
    '::ffff:10.1.2.3',
    'ff02::1',
    'not an address',
  ])('refuses %s', (address) => {
    expect(isPublicAddress(address)).toBe(false);
  });

  it.each(['8.8.8.8', '1.1.1.1', '93.184.216.34', '2001:4860:4860::8888', '::ffff:8.8.8.8'])('allows %s', (address) => {
    expect(isPublicAddress(address)).toBe(true);
  });

  it('checks URLs: scheme, credentials, literal and resolved addresses', async () => {
    expect(await checkTarget('ftp://8.8.8.8/x', false)).toMatchObject({ ok: false });
    expect(await checkTarget('https://user:pw@8.8.8.8/x', false)).toMatchObject({ ok: false });
    expect(await checkTarget('https://8.8.8.8/hook', false)).toEqual({ ok: true, addresses: ['8.8.8.8'] });
    expect(await checkTarget('http://[::1]:8080/hook', false)).toMatchObject({ ok: false });
    expect(await checkTarget('http://localhost:8080/hook', false)).toMatchObject({
      ok: false,
      reason: expect.stringContaining('non-public'),
    });
    expect(await checkTarget('http://localhost:8080/hook', true)).toMatchObject({ ok: true });
    expect(await checkTarget('not a url', true)).toMatchObject({ ok: false });
  });
});
