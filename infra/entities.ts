import { Credential, EmailVerification, Membership, Org, User } from '../domain/accounts/entities.ts';
import { PasswordReset } from '../domain/accounts/password-reset-entity.ts';
import { AuditEvent } from '../domain/audit/entities.ts';
import { MailMessage } from '../domain/mail/entities.ts';
import { OutboxMessage } from '../domain/outbox/entities.ts';
import { Namespace } from '../domain/projects/entities.ts';
import { WebhookEndpoint } from '../domain/webhooks/entities.ts';

export const entities = [User, Org, Membership, Credential, EmailVerification, AuditEvent, OutboxMessage, MailMessage, Namespace, PasswordReset, WebhookEndpoint];
