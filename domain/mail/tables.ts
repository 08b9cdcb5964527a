import { defineEntity, p } from '@mikro-orm/core';

// Every outgoing mail is kept here: the delivery record when SMTP is configured, the only copy when not.
export const MailMessage = defineEntity({
  name: 'MailMessage',
  tableName: 'mail_messages',
  properties: {
    id: p.uuid().primary(),
    kind: p.text(),
    dedupeKey: p.text().unique(),
    toAddress: p.text(),
    subject: p.text(),
    textBody: p.text(),
    transport: p.enum(['log', 'smtp'] as const),
    providerMessageId: p.text().nullable(),
    createdAt: p.datetime(),
    sentAt: p.datetime().nullable(),
  },
});
export type MailMessage = InstanceType<typeof MailMessage.class>;
