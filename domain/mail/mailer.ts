export interface OutgoingMail {
  to: string;
  subject: string;
  text: string;
}

// The port through which mail leaves; infra/mailer.ts provides SMTP and log-only implementations.
export interface Mailer {
  readonly transport: 'log' | 'smtp';
  send(mail: OutgoingMail): Promise<{ messageId: string | null }>;
}
