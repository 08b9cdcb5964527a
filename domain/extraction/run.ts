import type { EntityManager } from '@mikro-orm/postgresql';
import { actorOf, type Caller } from '../accounts/caller.ts';
import { auditInsert, type AuditInput } from '../audit/record.ts';
import { AppError } from '../errors.ts';
import type { ByokKeys, Llm, LlmTask, LlmUsage } from '../llm/port.ts';
import { newPendingSave } from '../memories/create.ts';
import { writeSaves, type PendingSave } from '../memories/save-batch.ts';
import { supersedeMemories } from '../memories/supersede.ts';
import type { QueryVectors } from '../search/query-vectors.ts';
import { searchMemories } from '../search/search.ts';
import { query, sql, toDate } from '../sql.ts';
import type { MemoryFilters } from '../store/filters.ts';
import { inThread, threadOrder, threadPosition } from '../store/threads.ts';
import { finishExtraction, monthlyTokens, queuedExtraction, type ExtractionDecision, type ExtractionView } from './extractions.ts';
import { conversationFactsTask, reconcileTask, type Decision, type Turn } from './tasks.ts';

export interface ExtractionDeps {
  llm: Llm;
  // The caller's own keys (BYOK), when the extraction was asked for with them.
  byok: ByokKeys | undefined;
  // Query vectors for hybrid search of the existing memories; null: words only (no model on this worker).
  vectors: QueryVectors | null;
  // The org's model tokens a month (in and out) past which extraction is skipped; 0: no cap.
  tokensPerMonth: number;
}

// The thread's turns before the new messages that the model is shown as context.
const CONTEXT_TURNS = 10;
// Existing memories compared with each fact, and with all the facts of one run at most.
const CANDIDATES_PER_FACT = 5;
const CANDIDATES_MAX = 30;

interface MessageRow {
  id: string;
  content: string;
  metadata: { role?: string; name?: string; parent_ref?: string };
  namespace: string;
  user_id: string | null;
  agent_id: string | null;
  run_id: string | null;
  occurred_at: string | null;
  created_at: string;
}

const turnOf = (r: MessageRow): Turn => ({
  role: r.metadata.role ?? 'user',
  name: r.metadata.name ?? null,
  content: r.content,
  occurredAt: toDate(r.occurred_at ?? r.created_at).getTime(),
});

// The extraction whose last message is `memoryId` (the enrichment the curator runs after the messages): the facts
// of the new messages (with the thread's turns before them as context), each compared with the scope's memories
// extracted before, and the decisions applied in one transaction. 'skipped' when there is none queued. A refused
// key or a malformed answer ends it failed with that reason; a provider that is unavailable throws, for the
// curator's retries (the activity ends it failed after the last).
export async function runExtraction(
  em: EntityManager,
  deps: ExtractionDeps,
  orgId: string,
  memoryId: string,
): Promise<'stored' | 'skipped'> {
  const extraction = await queuedExtraction(em, orgId, memoryId);
  if (!extraction) return 'skipped';
  const spent: LlmUsage = { input: 0, output: 0 };
  const end = (status: 'processed' | 'failed' | 'skipped', reason: string | null, decisions: ExtractionDecision[] = []) =>
    em.transactional(async (tx) => {
      if (!(await queuedExtraction(tx, orgId, memoryId))) return;
      await finishExtraction(tx, orgId, extraction.id, { status, reason, decisions, tokensIn: spent.input, tokensOut: spent.output });
    });
  if (deps.tokensPerMonth > 0) {
    const used = await monthlyTokens(em, orgId);
    if (used.in + used.out >= deps.tokensPerMonth) {
      await end('skipped', 'llm_budget');
      return 'stored';
    }
  }
  const messages = await messagesOf(em, orgId, extraction.messageIds);
  if (messages.length === 0) {
    await end('skipped', 'messages_gone');
    return 'stored';
  }
  const run = async <T>(task: LlmTask<T>): Promise<T> => {
    const answer = await deps.llm.run(task, deps.byok);
    spent.input += answer.usage.input;
    spent.output += answer.usage.output;
    return answer.value;
  };
  try {
    const earlier = await turnsBefore(em, orgId, messages[0]!);
    const { facts } = await run(conversationFactsTask(earlier.map(turnOf), messages.map(turnOf)));
    const existing = facts.length > 0 ? await candidatesOf(em, deps, orgId, facts, messages[0]!) : [];
    const decided =
      existing.length > 0
        ? normalize(
            facts,
            existing,
            (
              await run(
                reconcileTask(
                  facts,
                  existing.map((m) => m.content),
                ),
              )
            ).decisions,
          )
        : facts.map((fact) => ({ fact, action: 'ADD' as const, target: null, text: fact }));
    await em.transactional(async (tx) => {
      const locked = await queuedExtraction(tx, orgId, memoryId);
      if (!locked) return;
      const decisions = await apply(tx, locked, messages, decided);
      await finishExtraction(tx, orgId, extraction.id, {
        status: 'processed',
        reason: null,
        decisions,
        tokensIn: spent.input,
        tokensOut: spent.output,
      });
    });
  } catch (err) {
    if (err instanceof AppError && err.kind === 'upstream') {
      await end('failed', err.error);
      return 'stored';
    }
    throw err;
  }
  return 'stored';
}

// Ends a queued extraction as failed, for a reason found outside the run (the provider stayed unavailable).
export async function abandonExtraction(em: EntityManager, orgId: string, memoryId: string, reason: string): Promise<void> {
  await em.transactional(async (tx) => {
    const extraction = await queuedExtraction(tx, orgId, memoryId);
    if (extraction)
      await finishExtraction(tx, orgId, extraction.id, { status: 'failed', reason, decisions: [], tokensIn: 0, tokensOut: 0 });
  });
}

const MESSAGE_COLUMNS = sql`m.id, m.content, m.metadata, n.name as namespace, m.user_id, m.agent_id, m.run_id, m.occurred_at, m.created_at`;

// The messages still there (not deleted or superseded since), in thread order.
async function messagesOf(em: EntityManager, orgId: string, ids: string[]): Promise<MessageRow[]> {
  return query(
    em,
    sql<MessageRow>`select ${MESSAGE_COLUMNS} from memories m join namespaces n on n.org_id = m.org_id and n.id = m.namespace_id
      where m.org_id = ${orgId} and m.id = any(${ids}::uuid[]) and m.superseded_by is null order by ${threadOrder('m', 'asc')}`,
  );
}

async function turnsBefore(em: EntityManager, orgId: string, first: MessageRow): Promise<MessageRow[]> {
  const rows = await query(
    em,
    sql<MessageRow>`select ${MESSAGE_COLUMNS} from memories m join namespaces n on n.org_id = m.org_id and n.id = m.namespace_id
        cross join (select * from memories where org_id = ${orgId} and id = ${first.id}) f
      where ${inThread(orgId, sql`${first.metadata.parent_ref ?? ''}`)} and ${threadPosition('m')} < ${threadPosition('f')}
      order by ${threadOrder('m', 'desc')} limit ${CONTEXT_TURNS}`,
  );
  return rows.reverse();
}

// The memories extracted before in the conversation's scope (its project, user and agent; not its run, since
// what was learnt in one run holds in the next) that each fact's search finds best, each once.
async function candidatesOf(
  em: EntityManager,
  deps: ExtractionDeps,
  orgId: string,
  facts: string[],
  first: MessageRow,
): Promise<{ id: string; content: string }[]> {
  const filters: MemoryFilters = {
    namespace: first.namespace,
    userId: first.user_id ?? undefined,
    agentId: first.agent_id ?? undefined,
    expression: { source: 'extraction' },
  };
  const vectors = deps.vectors ? await deps.vectors.of(orgId, facts) : null;
  const found = new Map<string, string>();
  for (const [i, fact] of facts.entries()) {
    const { hits } = await searchMemories(
      em,
      orgId,
      { text: fact, k: CANDIDATES_PER_FACT, mode: vectors ? 'hybrid' : 'lexical', filters },
      vectors ? Promise.resolve(vectors[i]!) : undefined,
    );
    for (const hit of hits) if (found.size < CANDIDATES_MAX) found.set(hit.id, hit.content);
  }
  return [...found].map(([id, content]) => ({ id, content }));
}

interface Decided {
  fact: string;
  action: Decision;
  target: string | null;
  text: string | null;
}

// The model's decisions made safe: one per fact, in the facts' order (the first given for a fact counts; a fact
// given none is added); a decision naming no memory shown is taken as ADD (UPDATE) or NONE (DELETE, NONE).
function normalize(
  facts: string[],
  existing: { id: string }[],
  decisions: { fact: number; action: Decision; memory: number | null; text: string | null }[],
): Decided[] {
  return facts.map((fact, i) => {
    const d = decisions.find((x) => x.fact === i + 1);
    if (!d) return { fact, action: 'ADD', target: null, text: fact };
    const target = d.memory !== null ? (existing[d.memory - 1]?.id ?? null) : null;
    if (d.action === 'ADD') return { fact, action: 'ADD', target: null, text: d.text ?? fact };
    if (d.action === 'UPDATE')
      return target
        ? { fact, action: 'UPDATE', target, text: d.text ?? fact }
        : { fact, action: 'ADD', target: null, text: d.text ?? fact };
    return { fact, action: target ? d.action : 'NONE', target, text: null };
  });
}

// The decisions, each as a save (ADD, UPDATE), a supersession (UPDATE, DELETE) and an audit row, in one transaction.
async function apply(
  tx: EntityManager,
  extraction: ExtractionView & { caller: Caller },
  messages: MessageRow[],
  decided: Decided[],
): Promise<ExtractionDecision[]> {
  const { caller } = extraction;
  const last = messages.at(-1)!;
  const origin = { id: extraction.id, conversation_id: extraction.conversationId, messages: messages.map((m) => m.id) };
  const saves: PendingSave[] = [];
  const successors = new Map<string, string>();
  const decisions: ExtractionDecision[] = [];
  for (const d of decided) {
    let memoryId: string | null = null;
    if (d.action === 'ADD' || d.action === 'UPDATE') {
      const save = await newPendingSave(
        caller,
        {
          content: d.text!,
          namespace: last.namespace,
          source: 'extraction',
          metadata: {
            extraction: origin,
            ...(d.target
              ? { supersedes: d.target, history: [{ at: Date.now(), supersedes: d.target, by_extraction: extraction.id }] }
              : {}),
          },
          userId: last.user_id ?? undefined,
          agentId: last.agent_id ?? undefined,
          runId: last.run_id ?? undefined,
          occurredAt: turnOf(last).occurredAt,
        },
        undefined,
      );
      saves.push(save);
      memoryId = save.memory.id;
    }
    if (d.target && (d.action === 'UPDATE' || d.action === 'DELETE') && !successors.has(d.target))
      successors.set(d.target, memoryId ?? d.target);
    decisions.push({ action: d.action, fact: d.fact, memoryId, targetId: d.target });
  }
  if (saves.length > 0) await writeSaves(tx, saves);
  await supersedeMemories(tx, caller.orgId, successors);
  const audits: AuditInput[] = decisions.map((d) => ({
    orgId: caller.orgId,
    action: 'memory.extract',
    targetId: d.memoryId ?? d.targetId,
    actor: actorOf(caller),
    details: { extraction_id: extraction.id, decision: d.action, fact: d.fact, target_id: d.targetId },
  }));
  if (audits.length > 0) await query(tx, auditInsert(audits));
  return decisions;
}
