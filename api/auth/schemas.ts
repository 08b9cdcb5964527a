import { z } from 'zod';
import { PLANS, ROLES } from '../../domain/accounts/enums.ts';
import { PASSWORD_MAX_LENGTH, PASSWORD_MIN_LENGTH } from '../../domain/accounts/passwords.ts';
import { epochMs, wireOf } from '../../domain/wire.ts';

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

export const accountJson = wireOf(accountSchema);
export const orgJson = wireOf(orgSchema);
export const tokenJson = wireOf(tokenSchema);
export const issuedTokenJson = wireOf(issuedTokenSchema);
