import type { EntityManager } from '@mikro-orm/postgresql';
import { actorOf, type Caller } from '../accounts/caller.ts';
import { recordAudit } from '../audit/record.ts';
import { conflict, notFound } from '../errors.ts';
import { newId } from '../ids.ts';
import { patchObject } from '../metadata.ts';
import { escapeLike, query, queryOne, sql, toDate, toDateOrNull } from '../sql.ts';
import { isUniqueViolation } from '../unique-violation.ts';

export interface RunbookStep {
  description: string;
  command?: string | undefined;
  check?: string | undefined;
  notes?: string | undefined;
}

export interface RunbookView {
  id: string;
  title: string;
  summary: string;
  triggerPhrases: string[];
  steps: RunbookStep[];
  metadata: Record<string, unknown>;
  successCount: number;
  failureCount: number;
  createdAt: number;
  updatedAt: number;
  lastUsedAt: number | null;
}

export interface RunbookInput {
  title: string;
  summary?: string | undefined;
  triggerPhrases?: string[] | undefined;
  steps?: RunbookStep[] | undefined;
  metadata?: Record<string, unknown> | undefined;
}

export type RunbookPatch = Partial<RunbookInput>;

export type Outcome = 'success' | 'failure';

interface RunbookRow {
  id: string;
  title: string;
  summary: string;
  trigger_phrases: string[];
  steps: RunbookStep[];
  metadata: Record<string, unknown>;
  success_count: number;
  failure_count: number;
  created_at: string;
  updated_at: string;
  last_used_at: string | null;
}

const COLUMNS = sql`id, title, summary, trigger_phrases, steps, metadata, success_count, failure_count, created_at, updated_at,
    last_used_at`;

const view = (r: RunbookRow): RunbookView => ({
  id: r.id,
  title: r.title,
  summary: r.summary,
  triggerPhrases: r.trigger_phrases,
  steps: r.steps,
  metadata: r.metadata,
  successCount: r.success_count,
  failureCount: r.failure_count,
  createdAt: toDate(r.created_at).getTime(),
  updatedAt: toDate(r.updated_at).getTime(),
  lastUsedAt: toDateOrNull(r.last_used_at)?.getTime() ?? null,
});

// Titles are unique per org regardless of case (runbooks_org_title_unique on lower(title)); the index
// decides, so two concurrent creates of one title cannot both succeed.
async function uniqueTitle<T>(write: () => Promise<T>): Promise<T> {
  try {
    return await write();
  } catch (err) {
    if (isUniqueViolation(err)) {
      throw conflict('runbook_title_taken', 'another runbook of this org has that title (titles compare case-insensitively)');
    }
    throw err;
  }
}

export async function createRunbook(em: EntityManager, caller: Caller, input: RunbookInput): Promise<RunbookView> {
  return uniqueTitle(() =>
    em.transactional(async (tx) => {
      const row = await queryOne(
        tx,
        sql<RunbookRow>`insert into runbooks (id, org_id, title, summary, trigger_phrases, steps, metadata, created_at, updated_at)
            values (${newId()}, ${caller.orgId}, ${input.title}, ${input.summary ?? ''}, ${input.triggerPhrases ?? []}::text[],
                    ${JSON.stringify(input.steps ?? [])}::jsonb, ${JSON.stringify(input.metadata ?? {})}::jsonb, now(), now())
            returning ${COLUMNS}`,
      );
      await recordAudit(tx, {
        orgId: caller.orgId,
        action: 'runbook.create',
        targetId: row!.id,
        actor: actorOf(caller),
        details: { title: input.title },
      });
      return view(row!);
    }),
  );
}

export async function getRunbook(em: EntityManager, orgId: string, id: string): Promise<RunbookView> {
  const row = await queryOne(em, sql<RunbookRow>`select ${COLUMNS} from runbooks where id = ${id} and org_id = ${orgId}`);
  if (!row) throw notFound('runbook', id);
  return view(row);
}

export interface RunbookListQuery {
  q?: string | undefined;
  trigger?: string | undefined;
  limit: number;
  offset: number;
}

// Most recently changed first.
export async function listRunbooks(em: EntityManager, orgId: string, q: RunbookListQuery): Promise<RunbookView[]> {
  const pattern = q.q !== undefined ? `%${escapeLike(q.q)}%` : undefined;
  const rows = await query(
    em,
    sql<RunbookRow>`select ${COLUMNS} from runbooks
        where org_id = ${orgId}
          ${pattern !== undefined ? sql`and (title ilike ${pattern} or summary ilike ${pattern})` : sql``}
          ${q.trigger !== undefined ? sql`and trigger_phrases @> array[${q.trigger}]::text[]` : sql``}
        order by updated_at desc, id desc limit ${q.limit} offset ${q.offset}`,
  );
  return rows.map(view);
}

// Sparse: trigger phrases and steps are replaced as a whole, metadata is merged (null removes a key).
export async function updateRunbook(em: EntityManager, caller: Caller, id: string, patch: RunbookPatch): Promise<RunbookView> {
  return uniqueTitle(() =>
    em.transactional(async (tx) => {
      const current = await queryOne(
        tx,
        sql<RunbookRow>`select ${COLUMNS} from runbooks where id = ${id} and org_id = ${caller.orgId} for update`,
      );
      if (!current) throw notFound('runbook', id);
      const metadata = patch.metadata !== undefined ? patchObject(current.metadata, patch.metadata) : current.metadata;
      const row = await queryOne(
        tx,
        sql<RunbookRow>`update runbooks set title = ${patch.title ?? current.title}, summary = ${patch.summary ?? current.summary},
              trigger_phrases = ${patch.triggerPhrases ?? current.trigger_phrases}::text[],
                steps = ${JSON.stringify(patch.steps ?? current.steps)}::jsonb,
              metadata = ${JSON.stringify(metadata)}::jsonb, updated_at = greatest(now(), updated_at + interval '1 millisecond')
            where org_id = ${caller.orgId} and id = ${id} returning ${COLUMNS}`,
      );
      const fields = Object.keys(patch).filter((k) => patch[k as keyof RunbookPatch] !== undefined);
      await recordAudit(tx, { orgId: caller.orgId, action: 'runbook.update', targetId: id, actor: actorOf(caller), details: { fields } });
      return view(row!);
    }),
  );
}

export async function deleteRunbook(em: EntityManager, caller: Caller, id: string): Promise<void> {
  await em.transactional(async (tx) => {
    const row = await queryOne(
      tx,
      sql<{ title: string }>`delete from runbooks where id = ${id} and org_id = ${caller.orgId} returning title`,
    );
    if (!row) throw notFound('runbook', id);
    await recordAudit(tx, {
      orgId: caller.orgId,
      action: 'runbook.delete',
      targetId: id,
      actor: actorOf(caller),
      details: { title: row.title },
    });
  });
}

// Usage is not an edit: updated_at stays, last_used_at moves.
export async function recordOutcome(em: EntityManager, caller: Caller, id: string, outcome: Outcome): Promise<RunbookView> {
  return em.transactional(async (tx) => {
    const counter = outcome === 'success' ? sql`success_count = success_count + 1` : sql`failure_count = failure_count + 1`;
    const row = await queryOne(
      tx,
      sql<RunbookRow>`update runbooks set ${counter}, last_used_at = now() where id = ${id} and org_id = ${caller.orgId}
        returning ${COLUMNS}`,
    );
    if (!row) throw notFound('runbook', id);
    await recordAudit(tx, { orgId: caller.orgId, action: 'runbook.outcome', targetId: id, actor: actorOf(caller), details: { outcome } });
    return view(row);
  });
}

// Runbooks whose trigger phrase occurs in the text (case-insensitive), best track record first: the
// success ratio is smoothed (Laplace) so an unused runbook ranks at 0.5, between proven and failing ones.
export async function suggestRunbooks(em: EntityManager, orgId: string, text: string, limit = 4): Promise<RunbookView[]> {
  const rows = await query(
    em,
    sql<RunbookRow>`select ${COLUMNS} from runbooks r
        where org_id = ${orgId} and exists (select 1 from unnest(r.trigger_phrases) p
        where p <> '' and strpos(lower(${text}::text), lower(p)) > 0)
        order by (success_count + 1)::float8 / (success_count + failure_count + 2) desc, updated_at desc, id desc
        limit ${limit}`,
  );
  return rows.map(view);
}
