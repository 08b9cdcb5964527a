import type { EntityManager } from '@mikro-orm/postgresql';
import { actorOf, type Caller } from '../accounts/caller.ts';
import { recordAudit } from '../audit/record.ts';
import { notFound } from '../errors.ts';
import { newId } from '../ids.ts';
import { query, queryOne, sql, toDate } from '../sql.ts';

export const DEFAULT_CHAT_TITLE = 'New chat';
export const CHAT_TITLE_MAX = 200;
export const CHAT_PREVIEW_CHARS = 200;
export const CHAT_AUTO_TITLE_CHARS = 80;

export const CHAT_ROLES = ['user', 'assistant', 'system'] as const;
export type ChatRole = (typeof CHAT_ROLES)[number];

export const CITATION_TYPES = ['memory', 'procedural'] as const;

export interface ChatCitation {
  id: string;
  type: (typeof CITATION_TYPES)[number];
  title: string;
}

export interface ChatTurn {
  role: ChatRole;
  content: string;
  citations?: ChatCitation[] | undefined;
}

export interface ChatMessageView {
  role: ChatRole;
  content: string;
  citations: ChatCitation[];
  createdAt: number;
}

export interface ChatSessionSummary {
  id: string;
  title: string;
  messageCount: number;
  lastMessagePreview: string;
  createdAt: number;
  updatedAt: number;
}

export interface ChatSessionView {
  id: string;
  title: string;
  metadata: Record<string, unknown>;
  messages: ChatMessageView[];
  createdAt: number;
  updatedAt: number;
}

interface SessionRow {
  id: string;
  title: string;
  metadata: Record<string, unknown>;
  created_at: string;
  updated_at: string;
}

const ms = (value: string): number => toDate(value).getTime();

// A session is private to the user who created it, within the org it was created in.
const owned = (caller: Caller) => sql`org_id = ${caller.orgId} and user_id = ${caller.userId}`;

// Edits keep updated_at strictly increasing, so "most recently updated first" is stable within one millisecond.
const bumped = sql`updated_at = greatest(now(), updated_at + interval '1 millisecond')`;

export async function listSessions(em: EntityManager, caller: Caller, limit: number): Promise<ChatSessionSummary[]> {
  const rows = await query(
    em,
    sql<{ id: string; title: string; message_count: number; last_message_preview: string | null; created_at: string; updated_at: string }>`
      select s.id, s.title, s.created_at, s.updated_at,
             (select count(*)::int from chat_messages m where m.org_id = s.org_id and m.session_id = s.id) as message_count,
             (select left(m.content, ${CHAT_PREVIEW_CHARS}) from chat_messages m where m.org_id = s.org_id and m.session_id = s.id order by m.id desc limit 1) as last_message_preview
        from chat_sessions s
       where ${owned(caller)}
       order by s.updated_at desc, s.id desc
       limit ${limit}`,
  );
  return rows.map((r) => ({
    id: r.id,
    title: r.title,
    messageCount: r.message_count,
    lastMessagePreview: r.last_message_preview ?? '',
    createdAt: ms(r.created_at),
    updatedAt: ms(r.updated_at),
  }));
}

export async function createSession(
  em: EntityManager,
  caller: Caller,
  title: string = DEFAULT_CHAT_TITLE,
): Promise<ChatSessionSummary & { metadata: Record<string, unknown> }> {
  return em.transactional(async (tx) => {
    const row = (await queryOne(
      tx,
      sql<SessionRow>`insert into chat_sessions (id, org_id, user_id, title, metadata, created_at, updated_at)
          values (${newId()}, ${caller.orgId}, ${caller.userId}, ${title}, '{}'::jsonb, now(), now())
          returning id, title, metadata, created_at, updated_at`,
    ))!;
    await recordAudit(tx, {
      orgId: caller.orgId,
      action: 'chat.session.create',
      targetId: row.id,
      actor: actorOf(caller),
      details: { title },
    });
    return {
      id: row.id,
      title: row.title,
      metadata: row.metadata,
      messageCount: 0,
      lastMessagePreview: '',
      createdAt: ms(row.created_at),
      updatedAt: ms(row.updated_at),
    };
  });
}

export async function getSession(em: EntityManager, caller: Caller, id: string): Promise<ChatSessionView> {
  const session = await queryOne(
    em,
    sql<SessionRow>`select id, title, metadata, created_at, updated_at from chat_sessions where id = ${id} and ${owned(caller)}`,
  );
  if (!session) throw notFound('chat session', id);
  const messages = await query(
    em,
    sql<{ role: ChatRole; content: string; citations: ChatCitation[]; created_at: string }>`
      select role, content, citations, created_at from chat_messages where org_id = ${caller.orgId} and session_id = ${id} order by id`,
  );
  return {
    id: session.id,
    title: session.title,
    metadata: session.metadata,
    messages: messages.map((m) => ({ role: m.role, content: m.content, citations: m.citations, createdAt: ms(m.created_at) })),
    createdAt: ms(session.created_at),
    updatedAt: ms(session.updated_at),
  };
}

export async function renameSession(em: EntityManager, caller: Caller, id: string, title: string): Promise<{ id: string; title: string }> {
  return em.transactional(async (tx) => {
    const row = await queryOne(
      tx,
      sql<{
        id: string;
        title: string;
      }>`update chat_sessions set title = ${title}, ${bumped} where id = ${id} and ${owned(caller)} returning id, title`,
    );
    if (!row) throw notFound('chat session', id);
    await recordAudit(tx, { orgId: caller.orgId, action: 'chat.session.update', targetId: id, actor: actorOf(caller), details: { title } });
    return row;
  });
}

export async function deleteSession(em: EntityManager, caller: Caller, id: string): Promise<void> {
  await em.transactional(async (tx) => {
    const row = await queryOne(tx, sql<{ title: string }>`delete from chat_sessions where id = ${id} and ${owned(caller)} returning title`);
    if (!row) throw notFound('chat session', id);
    await recordAudit(tx, {
      orgId: caller.orgId,
      action: 'chat.session.delete',
      targetId: id,
      actor: actorOf(caller),
      details: { title: row.title },
    });
  });
}

export async function assertSessionOwned(em: EntityManager, caller: Caller, id: string): Promise<void> {
  const row = await queryOne(em, sql<{ id: string }>`select id from chat_sessions where id = ${id} and ${owned(caller)}`);
  if (!row) throw notFound('chat session', id);
}

// The title a still-untitled session takes from its first user message: one line, at most 80 characters
// (code points, so an emoji is never cut in half).
function titleFromMessage(content: string): string {
  return Array.from(content.replace(/\s+/g, ' ').trim()).slice(0, CHAT_AUTO_TITLE_CHARS).join('').trimEnd();
}

// Appends turns in order. The row lock serializes concurrent appends to one session, so neither the message
// order nor the automatic title can interleave.
export async function appendTurns(
  em: EntityManager,
  caller: Caller,
  sessionId: string,
  turns: ChatTurn[],
): Promise<{ id: string; title: string }> {
  return em.transactional(async (tx) => {
    const session = await queryOne(
      tx,
      sql<{ title: string }>`select title from chat_sessions where id = ${sessionId} and ${owned(caller)} for update`,
    );
    if (!session) throw notFound('chat session', sessionId);
    if (turns.length > 0) {
      await query(
        tx,
        sql`insert into chat_messages (org_id, session_id, role, content, citations, created_at)
            select ${caller.orgId}, ${sessionId}, t.role, t.content, t.citations, now()
              from unnest(${turns.map((t) => t.role)}::text[], ${turns.map((t) => t.content)}::text[], ${turns.map((t) => JSON.stringify(t.citations ?? []))}::jsonb[])
                   with ordinality as t(role, content, citations, ord)
             order by t.ord`,
      );
    }
    const firstUser = turns.find((t) => t.role === 'user');
    const derived = firstUser ? titleFromMessage(firstUser.content) : '';
    const title = session.title === DEFAULT_CHAT_TITLE && derived !== '' ? derived : session.title;
    await query(tx, sql`update chat_sessions set title = ${title}, ${bumped} where org_id = ${caller.orgId} and id = ${sessionId}`);
    return { id: sessionId, title };
  });
}
