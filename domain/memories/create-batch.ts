import type { EntityManager } from '@mikro-orm/postgresql';
import type { Caller } from '../accounts/caller.ts';
import { AppError, type ErrorKind } from '../errors.ts';
import type { MemoryView } from '../store/model.ts';
import { newPendingSave, type CreateContext, type NewMemory } from './create.ts';
import { claimIdempotencyKey, storeIdempotentResult } from './idempotency.ts';
import { admitWithinQuota } from './quota.ts';
import { writeSaves, type PendingSave } from './save-batch.ts';

// One item of a batch that was not saved: its place in the request and the error a single save would answer.
export interface BatchFailure {
  index: number;
  error: string;
  message: string;
  // The kind of error a single save would answer (its status), and the same extra fields (quota, max_bytes ...).
  kind: ErrorKind;
  extra: Record<string, unknown>;
}

export interface BatchOutcome {
  created: { index: number; memory: MemoryView }[];
  failed: BatchFailure[];
}

export type BatchItem = { index: number; input: NewMemory } | { index: number; failure: AppError };

// Many saves in one call, each with the single save's semantics (redaction, quota, the memory.saved event and the
// audit row), written in one statement: a bad item is reported with its index and the others are saved. A free
// org's items past its quota fail one by one with 402, the earlier ones stay. With an Idempotency-Key the whole
// call is one transaction and a repeat answers the first outcome.
export async function createMemories(
  em: EntityManager,
  caller: Caller,
  items: BatchItem[],
  context: CreateContext,
): Promise<BatchOutcome & { replayed: boolean }> {
  const failed: BatchFailure[] = [];
  const fail = (index: number, err: AppError) =>
    failed.push({ index, error: err.error, message: err.detail ?? err.error, kind: err.kind, extra: err.extra });
  const prepared: { index: number; save: PendingSave }[] = [];
  for (const item of items) {
    if ('failure' in item) fail(item.index, item.failure);
    else {
      try {
        prepared.push({ index: item.index, save: await newPendingSave(caller, item.input, context.llm) });
      } catch (err) {
        if (!(err instanceof AppError)) throw err;
        fail(item.index, err);
      }
    }
  }
  const outcome = (saved: typeof prepared): BatchOutcome & { replayed: boolean } => ({
    created: saved.map((p) => ({ index: p.index, memory: p.save.memory })),
    failed: failed.sort((a, b) => a.index - b.index),
    replayed: false,
  });
  if (caller.plan !== 'free' && !context.idempotency) return outcome(await writeEach(em, prepared, fail));
  return em.transactional(async (tx) => {
    const idempotency = context.idempotency;
    if (idempotency) {
      const claim = await claimIdempotencyKey<BatchOutcome>(tx, caller.orgId, idempotency.key, idempotency.requestHash);
      if (claim.replay) return { ...claim.replay, replayed: true };
    }
    const refusals = await admitWithinQuota(
      tx,
      caller.orgId,
      caller.plan,
      prepared.map((p) => p.save.bytes),
      context.upgradeUrl,
    );
    const admitted = prepared.filter((p, i) => {
      const refusal = refusals[i];
      if (refusal) fail(p.index, refusal);
      return !refusal;
    });
    if (admitted.length > 0)
      await writeSaves(
        tx,
        admitted.map((p) => p.save),
      );
    const result = outcome(admitted);
    if (idempotency)
      await storeIdempotentResult(tx, caller.orgId, idempotency.key, 200, { created: result.created, failed: result.failed });
    return result;
  });
}

// The items in one statement; when that fails for a reason of one item (a save naming a project past the org's
// limit), each again on its own, so that one item never fails the others.
async function writeEach(
  em: EntityManager,
  prepared: { index: number; save: PendingSave }[],
  fail: (index: number, err: AppError) => void,
) {
  if (prepared.length === 0) return prepared;
  try {
    await writeSaves(
      em,
      prepared.map((p) => p.save),
    );
    return prepared;
  } catch (err) {
    if (!(err instanceof AppError)) throw err;
  }
  const saved = [];
  for (const p of prepared) {
    try {
      await writeSaves(em, [p.save]);
      saved.push(p);
    } catch (err) {
      if (!(err instanceof AppError)) throw err;
      fail(p.index, err);
    }
  }
  return saved;
}
