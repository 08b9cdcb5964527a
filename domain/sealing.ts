import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';

// Secrets the service must read back but must not keep in the clear (a caller's LLM keys in escrow, webhook signing
// secrets): AES-256-GCM under the server's escrow key (BYOK_ESCROW_KEY). `context` is authenticated with the text
// (a row's id and org, say), so a sealed blob cannot be moved to another row or org. The blob is iv, tag, text.
export function sealText(key: Buffer, context: string, text: string): Buffer {
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', key, iv);
  cipher.setAAD(Buffer.from(context));
  const body = Buffer.concat([cipher.update(text, 'utf8'), cipher.final()]);
  return Buffer.concat([iv, cipher.getAuthTag(), body]);
}

export function openText(key: Buffer, context: string, sealed: Buffer): string {
  const decipher = createDecipheriv('aes-256-gcm', key, sealed.subarray(0, 12));
  decipher.setAAD(Buffer.from(context));
  decipher.setAuthTag(sealed.subarray(12, 28));
  return Buffer.concat([decipher.update(sealed.subarray(28)), decipher.final()]).toString('utf8');
}
