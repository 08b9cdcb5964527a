import type { EntityManager } from '@mikro-orm/postgresql';
import type { Plan } from '../accounts/enums.ts';
import { readCounters } from '../counters.ts';
import type { ErrorCode } from '../error-codes.ts';
import { AppError } from '../errors.ts';
import { query, sql } from '../sql.ts';
import { ORG_COUNTERS } from '../store/counters.ts';
import { FREE_MEMORY_QUOTA, FREE_STORAGE_QUOTA_BYTES } from './limits.ts';

// Free orgs only: their writes are serialised by an advisory lock held to commit, so two concurrent saves
// cannot both see the last free slot. Paid orgs take no lock.
async function lockedUsage(em: EntityManager, orgId: string): Promise<Map<string, number>> {
  await query(em, sql`select pg_advisory_xact_lock(hashtextextended(${`quota:${orgId}`}, 0))`);
  return readCounters(em, orgId);
}

function exceeded(error: ErrorCode, detail: string, used: number, limit: number, plan: Plan, upgradeUrl: string): AppError {
  return new AppError('payment_required', error, detail, { quota: { used, limit, plan }, upgrade_url: upgradeUrl });
}

function checkStorage(usage: Map<string, number>, addedBytes: number, plan: Plan, upgradeUrl: string): void {
  const bytes = usage.get(ORG_COUNTERS.bytes) ?? 0;
  if (bytes + addedBytes > FREE_STORAGE_QUOTA_BYTES) {
    throw exceeded(
      'storage_quota_exceeded',
      `the free plan allows ${FREE_STORAGE_QUOTA_BYTES} bytes of memory content and metadata`,
      bytes,
      FREE_STORAGE_QUOTA_BYTES,
      plan,
      upgradeUrl,
    );
  }
}

export async function checkCreateQuota(
  em: EntityManager,
  orgId: string,
  plan: Plan,
  addedBytes: number,
  upgradeUrl: string,
): Promise<void> {
  if (plan !== 'free') return;
  const usage = await lockedUsage(em, orgId);
  const created = usage.get(ORG_COUNTERS.created) ?? 0;
  if (created >= FREE_MEMORY_QUOTA) {
    throw exceeded(
      'memory_quota_exceeded',
      `the free plan allows ${FREE_MEMORY_QUOTA} memories over the org's lifetime`,
      created,
      FREE_MEMORY_QUOTA,
      plan,
      upgradeUrl,
    );
  }
  checkStorage(usage, addedBytes, plan, upgradeUrl);
}

// A free org's batch of saves, in order: null for each that fits the quota, or the 402 it fails with (the memory
// count is spent by the items before it; a smaller item may still fit the storage a larger one did not).
export async function admitWithinQuota(
  em: EntityManager,
  orgId: string,
  plan: Plan,
  sizes: number[],
  upgradeUrl: string,
): Promise<(AppError | null)[]> {
  if (plan !== 'free') return sizes.map(() => null);
  const usage = await lockedUsage(em, orgId);
  let created = usage.get(ORG_COUNTERS.created) ?? 0;
  let bytes = usage.get(ORG_COUNTERS.bytes) ?? 0;
  return sizes.map((size) => {
    if (created >= FREE_MEMORY_QUOTA) {
      return exceeded(
        'memory_quota_exceeded',
        `the free plan allows ${FREE_MEMORY_QUOTA} memories over the org's lifetime`,
        created,
        FREE_MEMORY_QUOTA,
        plan,
        upgradeUrl,
      );
    }
    if (bytes + size > FREE_STORAGE_QUOTA_BYTES) {
      return exceeded(
        'storage_quota_exceeded',
        `the free plan allows ${FREE_STORAGE_QUOTA_BYTES} bytes of memory content and metadata`,
        bytes,
        FREE_STORAGE_QUOTA_BYTES,
        plan,
        upgradeUrl,
      );
    }
    created += 1;
    bytes += size;
    return null;
  });
}

// A free org's update that grows a memory (its content or its metadata) must still fit the storage quota.
export async function checkStorageGrowth(
  em: EntityManager,
  orgId: string,
  plan: Plan,
  addedBytes: number,
  upgradeUrl: string,
): Promise<void> {
  if (plan !== 'free') return;
  checkStorage(await lockedUsage(em, orgId), addedBytes, plan, upgradeUrl);
}

// What a plan allows and what the org used, for people to see (no lock: a reading, not a check).
export interface Usage {
  memoriesCreated: number;
  memoryLimit: number | null;
  storageBytes: number;
  storageLimitBytes: number | null;
}

export async function usageOf(em: EntityManager, orgId: string, plan: Plan): Promise<Usage> {
  const usage = await readCounters(em, orgId);
  const free = plan === 'free';
  return {
    memoriesCreated: usage.get(ORG_COUNTERS.created) ?? 0,
    memoryLimit: free ? FREE_MEMORY_QUOTA : null,
    storageBytes: usage.get(ORG_COUNTERS.bytes) ?? 0,
    storageLimitBytes: free ? FREE_STORAGE_QUOTA_BYTES : null,
  };
}
