import type { EntityManager } from '@mikro-orm/postgresql';
import { newId } from '../ids.ts';
import { query, queryOne, sql } from '../sql.ts';
import type { Mailer, OutgoingMail } from './mailer.ts';

export type DeliveryOutcome = 'sent' | 'already_sent' | 'nothing_to_send';

// Sends one logical mail at most once per dedupe key once it is recorded as sent; a crash between the
// send and the record sends it again (at-least-once, the best any mail transport offers).
export async function deliverMail(
  em: EntityManager,
  mailer: Mailer,
  kind: string,
  dedupeKey: string,
  compose: (em: EntityManager) => Promise<OutgoingMail | null>,
): Promise<DeliveryOutcome> {
  const previous = await queryOne(em, sql<{ sent_at: string | null }>`select sent_at from mail_messages where dedupe_key = ${dedupeKey}`);
  if (previous?.sent_at) return 'already_sent';
  const mail = await compose(em);
  if (!mail) return 'nothing_to_send';
  const { messageId } = await mailer.send(mail);
  // Without SMTP the table is the delivery channel and keeps the body; with SMTP the body (which may hold
  // a single-use link) is not kept.
  const textBody = mailer.transport === 'log' ? mail.text : '';
  await query(
    em,
    sql`insert into mail_messages
        (id, kind, dedupe_key, to_address, subject, text_body, transport, provider_message_id, created_at, sent_at)
      values (${newId()}, ${kind}, ${dedupeKey}, ${mail.to}, ${mail.subject}, ${textBody}, ${mailer.transport}, ${messageId}, now(), now())
      on conflict (dedupe_key) do update set kind = excluded.kind, to_address = excluded.to_address, subject = excluded.subject,
        text_body = excluded.text_body, transport = excluded.transport, provider_message_id = excluded.provider_message_id,
        sent_at = excluded.sent_at`,
  );
  return 'sent';
}
