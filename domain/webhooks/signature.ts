import { createHmac } from 'node:crypto';

// Standard Webhooks: `v1,` + base64(HMAC-SHA256(key = base64-decoded secret after `whsec_`,
// message = `${id}.${timestamp}.${body}`)).
export function signWebhook(secret: string, id: string, timestampSeconds: number, body: string): string {
  const key = Buffer.from(secret.replace(/^whsec_/, ''), 'base64');
  return `v1,${createHmac('sha256', key).update(`${id}.${timestampSeconds}.${body}`).digest('base64')}`;
}
