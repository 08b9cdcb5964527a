import { defineEntity, p } from '@mikro-orm/core';

export const PasswordReset = defineEntity({
  name: 'PasswordReset',
  tableName: 'password_resets',
  properties: {
    id: p.uuid().primary(),
    userId: p.uuid(),
    tokenHash: p.text().unique(),
    createdAt: p.datetime(),
    expiresAt: p.datetime(),
    usedAt: p.datetime().nullable(),
  },
});
export type PasswordReset = InstanceType<typeof PasswordReset.class>;
