import type { EntityManager } from '@mikro-orm/postgresql';
import type { Plan } from '../accounts/entities.ts';
import { readCounters } from '../counters.ts';
import { AppError } from '../errors.ts';
import { query, sql } from '../sql.ts';
import { ORG_COUNTERS } from './counters.ts';
import { FREE_MEMORY_QUOTA, FREE_STORAGE_QUOTA_BYTES } from './limits.ts';

// Free orgs only: their creates are serialised by an advisory lock held to commit, so two concurrent
// creates cannot both see the last free slot. Paid orgs take no lock.
export async function checkCreateQuota(em: EntityManager, orgId: string, plan: Plan, addedBytes: number, upgradeUrl: string): Promise<void> {
  if (plan !== 'free') return;
  await query(em, sql`select pg_advisory_xact_lock(hashtextextended(${`quota:${orgId}`}, 0))`);
  const counters = await readCounters(em, orgId);
  const created = counters.get(ORG_COUNTERS.created) ?? 0;
  if (created >= FREE_MEMORY_QUOTA) {
    throw new AppError('payment_required', 'memory_quota_exceeded', `the free plan allows ${FREE_MEMORY_QUOTA} memories over the org's lifetime`, {
      quota: { used: created, limit: FREE_MEMORY_QUOTA, plan },
      upgrade_url: upgradeUrl,
    });
  }
  const bytes = counters.get(ORG_COUNTERS.bytes) ?? 0;
  if (bytes + addedBytes > FREE_STORAGE_QUOTA_BYTES) {
    throw new AppError('payment_required', 'storage_quota_exceeded', `the free plan allows ${FREE_STORAGE_QUOTA_BYTES} bytes of memory content`, {
      quota: { used: bytes, limit: FREE_STORAGE_QUOTA_BYTES, plan },
      upgrade_url: upgradeUrl,
    });
  }
}

// A free org's update that grows content must still fit the storage quota.
export async function checkStorageGrowth(em: EntityManager, orgId: string, plan: Plan, addedBytes: number, upgradeUrl: string): Promise<void> {
  if (plan !== 'free') return;
  await query(em, sql`select pg_advisory_xact_lock(hashtextextended(${`quota:${orgId}`}, 0))`);
  const bytes = (await readCounters(em, orgId)).get(ORG_COUNTERS.bytes) ?? 0;
  if (bytes + addedBytes > FREE_STORAGE_QUOTA_BYTES) {
    throw new AppError('payment_required', 'storage_quota_exceeded', `the free plan allows ${FREE_STORAGE_QUOTA_BYTES} bytes of memory content`, {
      quota: { used: bytes, limit: FREE_STORAGE_QUOTA_BYTES, plan },
      upgrade_url: upgradeUrl,
    });
  }
}
