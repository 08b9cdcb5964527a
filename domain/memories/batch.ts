import type { EntityManager } from '@mikro-orm/postgresql';
import type { Caller } from '../accounts/caller.ts';
import { AppError } from '../errors.ts';
import type { MemoryView } from '../store/model.ts';
import { updateMemory, type MemoryPatch, type UpdateContext } from './update.ts';

export interface BatchItem extends MemoryPatch {
  id: string;
}

export interface BatchResult {
  results: MemoryView[];
  failed: { id: string | null; error: string }[];
}

// Each row commits on its own: a bad row is reported and the others still apply (one memory.updated each).
export async function batchUpdate(em: EntityManager, caller: Caller, items: BatchItem[], context: UpdateContext): Promise<BatchResult> {
  const out: BatchResult = { results: [], failed: [] };
  for (const { id, ...patch } of items) {
    try {
      out.results.push(await updateMemory(em, caller, id, patch, context));
    } catch (err) {
      if (!(err instanceof AppError)) throw err;
      out.failed.push({ id, error: err.error });
    }
  }
  return out;
}
