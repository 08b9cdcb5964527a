import type { EntityManager } from '@mikro-orm/postgresql';
import { newId } from '../ids.ts';
import { MailMessage } from './tables.ts';
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
  const previous = await em.findOne(MailMessage, { dedupeKey });
  if (previous?.sentAt) return 'already_sent';
  const mail = await compose(em);
  if (!mail) return 'nothing_to_send';
  const { messageId } = await mailer.send(mail);
  // Without SMTP the table is the delivery channel and keeps the body; with SMTP the body (which may hold
  // a single-use link) is not kept.
  const textBody = mailer.transport === 'log' ? mail.text : '';
  await em.upsert(MailMessage, {
    id: previous?.id ?? newId(),
    kind,
    dedupeKey,
    toAddress: mail.to,
    subject: mail.subject,
    textBody,
    transport: mailer.transport,
    providerMessageId: messageId,
    createdAt: previous?.createdAt ?? new Date(),
    sentAt: new Date(),
  });
  return 'sent';
}
