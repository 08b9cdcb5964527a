import { z } from 'zod';
import type { TokenView } from '../../domain/accounts/tokens.ts';
import type { OrgView, UserView } from '../../domain/accounts/views.ts';
import { PLANS, ROLES } from '../../domain/accounts/tables.ts';
import { PASSWORD_MAX_LENGTH, PASSWORD_MIN_LENGTH } from '../../domain/accounts/passwords.ts';
import { ms, msOrNull } from '../http/schemas.ts';
import { epochMs } from '../../domain/wire.ts';

const userSchema = z
  .object({
    id: z.uuid(),
    email: z.email(),
    name: z.string(),
    email_verified: z.boolean(),
    email_verified_at: epochMs.nullable(),
    last_login_at: epochMs.nullable(),
    created_at: epochMs,
    updated_at: epochMs,
  })
  .meta({ id: 'User' });

export const orgSchema = z
  .object({
    id: z.uuid(),
    slug: z.string(),
    name: z.string(),
    plan: z.enum(PLANS),
    role: z.enum(ROLES).meta({ description: "the caller's role in this org" }),
    created_at: epochMs,
  })
  .meta({ id: 'Organization' });

export const accountSchema = z.object({ user: userSchema, org: orgSchema }).meta({ id: 'Account' });

export const tokenSchema = z
  .object({
    id: z.uuid(),
    prefix: z.string().meta({ description: 'first 8 characters of the raw token' }),
    name: z.string().nullable(),
    user_id: z.uuid(),
    created_at: epochMs,
    last_used_at: epochMs.nullable(),
    expires_at: epochMs.nullable(),
  })
  .meta({ id: 'ApiToken' });

export const issuedTokenSchema = tokenSchema
  .extend({ raw: z.string().startsWith('svc_').meta({ description: 'the full token; shown only in this response' }) })
  .meta({ id: 'IssuedApiToken' });

// RFC 5321's limits (64 octets before the @, 254 in all), which mail servers and validators enforce.
export const email = z
  .email()
  .max(254)
  .refine((e) => e.lastIndexOf('@') <= 64, 'at most 64 characters before the @');
export const password = z.string().min(PASSWORD_MIN_LENGTH, `at least ${PASSWORD_MIN_LENGTH} characters`).max(PASSWORD_MAX_LENGTH);
export const personName = z.string().trim().min(1).max(200);

const userJson = (u: UserView): z.infer<typeof userSchema> => ({
  id: u.id,
  email: u.email,
  name: u.name,
  email_verified: u.emailVerifiedAt !== null,
  email_verified_at: msOrNull(u.emailVerifiedAt),
  last_login_at: msOrNull(u.lastLoginAt),
  created_at: ms(u.createdAt),
  updated_at: ms(u.updatedAt),
});

export const orgJson = (o: OrgView): z.infer<typeof orgSchema> => ({
  id: o.id,
  slug: o.slug,
  name: o.name,
  plan: o.plan,
  role: o.role,
  created_at: ms(o.createdAt),
});

export const accountJson = (a: { user: UserView; org: OrgView }) => ({ user: userJson(a.user), org: orgJson(a.org) });

export const tokenJson = (t: TokenView): z.infer<typeof tokenSchema> => ({
  id: t.id,
  prefix: t.prefix,
  name: t.name,
  user_id: t.userId,
  created_at: ms(t.createdAt),
  last_used_at: msOrNull(t.lastUsedAt),
  expires_at: msOrNull(t.expiresAt),
});
