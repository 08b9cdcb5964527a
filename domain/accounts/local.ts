import type { EntityManager } from '@mikro-orm/postgresql';
import type { Caller } from './caller.ts';
import { findUser, insertMembership, insertOrg, insertUser } from './rows.ts';

// SERVICE_MODE=local: one implicit user and org on the enterprise plan; every call acts as them.
export const LOCAL_USER_ID = '00000000-0000-7000-8000-000000000001';
export const LOCAL_ORG_ID = '00000000-0000-7000-8000-000000000002';

export async function ensureLocalAccount(em: EntityManager): Promise<Caller> {
  await em.transactional(async (tx) => {
    if (await findUser(tx, LOCAL_USER_ID)) return;
    const now = new Date();
    await insertOrg(tx, { id: LOCAL_ORG_ID, slug: 'local', name: 'Local', plan: 'enterprise', now });
    await insertUser(tx, {
      id: LOCAL_USER_ID,
      email: 'local@memory-service.local',
      name: 'Local user',
      passwordHash: null,
      emailVerifiedAt: now,
      lastLoginAt: null,
      lastOrgId: LOCAL_ORG_ID,
      now,
    });
    await insertMembership(tx, { orgId: LOCAL_ORG_ID, userId: LOCAL_USER_ID, role: 'owner', now });
  });
  return { userId: LOCAL_USER_ID, orgId: LOCAL_ORG_ID, role: 'owner', plan: 'enterprise', credentialId: null, credentialKind: 'local' };
}
