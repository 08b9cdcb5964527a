import { describe, expect, it } from 'vitest';
import { hashPassword, verifyPassword } from '../../domain/accounts/passwords.ts';
import { hashSecret, issueSecret } from '../../domain/accounts/secrets.ts';
import { SLUG_RE, slugify, withSuffix } from '../../domain/accounts/slugs.ts';
import { requireRole } from '../../domain/accounts/roles.ts';
import type { Caller } from '../../domain/accounts/caller.ts';
import { AppError } from '../../domain/errors.ts';

describe('secrets', () => {
  it('issues svc_ tokens of 256 random bits with an 8-character prefix and a SHA-256 hash', () => {
    const a = issueSecret();
    const b = issueSecret();
    expect(a.raw).toMatch(/^svc_[A-Za-z0-9_-]{43}$/);
    expect(a.prefix).toBe(a.raw.slice(0, 8));
    expect(a.hash).toMatch(/^[0-9a-f]{64}$/);
    expect(a.hash).toBe(hashSecret(a.raw));
    expect(a.raw).not.toBe(b.raw);
    expect(a.hash).not.toContain(a.raw.slice(4));
  });
});

describe('passwords', () => {
  it('hashes with argon2id and verifies', async () => {
    const hash = await hashPassword('correct horse battery');
    expect(hash).toMatch(/^\$argon2id\$v=19\$m=19456,t=2,p=1\$/);
    expect(await verifyPassword(hash, 'correct horse battery')).toBe(true);
    expect(await verifyPassword(hash, 'correct horse batterY')).toBe(false);
    expect(await verifyPassword(null, 'anything')).toBe(false);
    expect(await verifyPassword('not-a-hash', 'anything')).toBe(false);
  });
});

describe('slugs', () => {
  it.each([
    ['Analytical Engines', 'analytical-engines'],
    ['  Ünïcödé  Ltd.  ', 'unicode-ltd'],
    ['***', 'org'],
    ['A'.repeat(120), 'a'.repeat(60)],
    ['team--rocket__2', 'team-rocket-2'],
  ])('slugify(%j) = %j', (name, slug) => {
    expect(slugify(name)).toBe(slug);
    expect(slugify(name)).toMatch(SLUG_RE);
  });

  it('suffixes stay within the slug rules', () => {
    expect(withSuffix('a'.repeat(71))).toMatch(SLUG_RE);
  });
});

describe('roles', () => {
  const caller = (role: Caller['role']): Caller => ({
    userId: 'u',
    orgId: 'o',
    role,
    plan: 'free',
    credentialId: null,
    credentialKind: 'api',
  });
  it('ranks owner over admin over member', () => {
    expect(() => requireRole(caller('owner'), 'owner')).not.toThrow();
    expect(() => requireRole(caller('admin'), 'admin')).not.toThrow();
    expect(() => requireRole(caller('admin'), 'owner')).toThrow(AppError);
    expect(() => requireRole(caller('member'), 'admin')).toThrow(/admin/);
  });
});
