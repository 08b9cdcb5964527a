import type { EntityManager } from '@mikro-orm/postgresql';
import { query, sql, toDateOrNull } from '../../domain/sql.ts';

// The mails the service recorded in mail_messages (domain/mail/deliver.ts), oldest first.
export interface RecordedMail {
  kind: string;
  dedupeKey: string;
  toAddress: string;
  subject: string;
  textBody: string;
  transport: 'log' | 'smtp';
  providerMessageId: string | null;
  sentAt: Date | null;
}

export async function recordedMails(em: EntityManager, where: { to?: string; kind?: string; dedupeKey?: string }): Promise<RecordedMail[]> {
  const rows = await query(
    em,
    sql<Omit<RecordedMail, 'sentAt'> & { sentAt: string | null }>`select kind, dedupe_key as "dedupeKey", to_address as "toAddress",
        subject, text_body as "textBody", transport, provider_message_id as "providerMessageId", sent_at as "sentAt"
      from mail_messages
      where (${where.to ?? null}::text is null or to_address = ${where.to ?? null})
        and (${where.kind ?? null}::text is null or kind = ${where.kind ?? null})
        and (${where.dedupeKey ?? null}::text is null or dedupe_key = ${where.dedupeKey ?? null})
      order by created_at, id`,
  );
  return rows.map((r) => ({ ...r, sentAt: toDateOrNull(r.sentAt) }));
}
