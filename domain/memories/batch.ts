import type { EntityManager } from '@mikro-orm/postgresql';
import type { Caller } from '../accounts/caller.ts';
import type { ErrorCode } from '../error-codes.ts';
import { AppError } from '../errors.ts';
import type { MemoryView } from '../store/model.ts';
import { updateMemory, type MemoryPatch, type UpdateContext } from './update.ts';

export interface BatchItem extends MemoryPatch {
  id: string;
}

// A row not applied: the code, message and extra fields its single update would have answered.
export interface BatchUpdateFailure {
  [extra: string]: unknown;
  id: string | null;
  error: ErrorCode;
  message: string;
  issues?: { path: string; message: string }[];
}

export const rowFailure = (id: string | null, err: AppError): BatchUpdateFailure => ({
  ...err.extra,
  id,
  error: err.error,
  message: err.detail ?? err.error,
});

export interface BatchResult {
  results: MemoryView[];
  failed: BatchUpdateFailure[];
}

// Each row commits on its own: a bad row is reported and the others still apply (one memory.updated each).
export async function batchUpdate(em: EntityManager, caller: Caller, items: BatchItem[], context: UpdateContext): Promise<BatchResult> {
  const out: BatchResult = { results: [], failed: [] };
  for (const { id, ...patch } of items) {
    try {
      out.results.push(await updateMemory(em, caller, id, patch, context));
    } catch (err) {
      if (!(err instanceof AppError)) throw err;
      out.failed.push(rowFailure(id, err));
    }
  }
  return out;
}
