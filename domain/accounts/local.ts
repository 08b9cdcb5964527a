import type { EntityManager } from '@mikro-orm/postgresql';
import type { Caller } from './caller.ts';
import { Membership, Org, User } from './tables.ts';

// SERVICE_MODE=local: one implicit user and org on the enterprise plan; every call acts as them.
export const LOCAL_USER_ID = '00000000-0000-7000-8000-000000000001';
export const LOCAL_ORG_ID = '00000000-0000-7000-8000-000000000002';

export async function ensureLocalAccount(em: EntityManager): Promise<Caller> {
  await em.transactional(async (tx) => {
    if (await tx.findOne(User, { id: LOCAL_USER_ID })) return;
    const now = new Date();
    tx.create(Org, { id: LOCAL_ORG_ID, slug: 'local', name: 'Local', plan: 'enterprise', createdAt: now, updatedAt: now });
    tx.create(User, {
      id: LOCAL_USER_ID,
      email: 'local@memory-service.local',
      name: 'Local user',
      passwordHash: null,
      emailVerifiedAt: now,
      lastLoginAt: null,
      lastOrgId: LOCAL_ORG_ID,
      createdAt: now,
      updatedAt: now,
    });
    tx.create(Membership, { orgId: LOCAL_ORG_ID, userId: LOCAL_USER_ID, role: 'owner', createdAt: now });
  });
  return { userId: LOCAL_USER_ID, orgId: LOCAL_ORG_ID, role: 'owner', plan: 'enterprise', credentialId: null, credentialKind: 'local' };
}
