import { Credential, EmailVerification, Membership, Org, User } from '../domain/accounts/tables.ts';
import { PasswordReset } from '../domain/accounts/password-reset-table.ts';
import { AuditEvent } from '../domain/audit/tables.ts';
import { MailMessage } from '../domain/mail/tables.ts';
import { OutboxMessage } from '../domain/outbox/tables.ts';
import { Namespace } from '../domain/projects/tables.ts';

export const entities = [
  User,
  Org,
  Membership,
  Credential,
  EmailVerification,
  AuditEvent,
  OutboxMessage,
  MailMessage,
  Namespace,
  PasswordReset,
];
