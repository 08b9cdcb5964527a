import { defineEntity, p } from '@mikro-orm/core';

export const ROLES = ['owner', 'admin', 'member'] as const;
export type Role = (typeof ROLES)[number];

export const PLANS = ['free', 'personal', 'team', 'enterprise'] as const;
export type Plan = (typeof PLANS)[number];

export const CREDENTIAL_KINDS = ['api', 'session'] as const;
export type CredentialKind = (typeof CREDENTIAL_KINDS)[number];

export const User = defineEntity({
  name: 'User',
  tableName: 'users',
  properties: {
    id: p.uuid().primary(),
    email: p.text().unique(),
    name: p.text(),
    passwordHash: p.text().nullable(),
    emailVerifiedAt: p.datetime().nullable(),
    lastLoginAt: p.datetime().nullable(),
    lastOrgId: p.uuid().nullable(),
    createdAt: p.datetime(),
    updatedAt: p.datetime(),
  },
});
export type User = InstanceType<typeof User.class>;

export const Org = defineEntity({
  name: 'Org',
  tableName: 'orgs',
  properties: {
    id: p.uuid().primary(),
    slug: p.text().unique(),
    name: p.text(),
    plan: p.enum(PLANS),
    createdAt: p.datetime(),
    updatedAt: p.datetime(),
  },
});
export type Org = InstanceType<typeof Org.class>;

export const Membership = defineEntity({
  name: 'Membership',
  tableName: 'memberships',
  properties: {
    orgId: p.uuid().primary(),
    userId: p.uuid().primary(),
    role: p.enum(ROLES),
    createdAt: p.datetime(),
  },
});
export type Membership = InstanceType<typeof Membership.class>;

// API tokens and cookie sessions are one record type: both forms resolve to the same kind of row
// (contract section 5.1); `kind` separates what the token list shows from what logout ends.
export const Credential = defineEntity({
  name: 'Credential',
  tableName: 'credentials',
  properties: {
    id: p.uuid().primary(),
    kind: p.enum(CREDENTIAL_KINDS),
    orgId: p.uuid(),
    userId: p.uuid(),
    name: p.text().nullable(),
    prefix: p.text(),
    secretHash: p.text().unique(),
    createdAt: p.datetime(),
    lastUsedAt: p.datetime().nullable(),
    expiresAt: p.datetime().nullable(),
    revokedAt: p.datetime().nullable(),
  },
});
export type Credential = InstanceType<typeof Credential.class>;

export const EmailVerification = defineEntity({
  name: 'EmailVerification',
  tableName: 'email_verifications',
  properties: {
    id: p.uuid().primary(),
    userId: p.uuid(),
    email: p.text(),
    tokenHash: p.text().unique(),
    createdAt: p.datetime(),
    expiresAt: p.datetime(),
    usedAt: p.datetime().nullable(),
  },
});
export type EmailVerification = InstanceType<typeof EmailVerification.class>;
