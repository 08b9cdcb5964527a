import { createHash, randomBytes } from 'node:crypto';

// Raw credentials are 32 random bytes; only their SHA-256 is stored. A fast hash is right here:
// unlike a password, a 256-bit random secret cannot be guessed, so slowing the lookup buys nothing.
export const TOKEN_PREFIX = 'svc_';
const DISPLAY_PREFIX_LENGTH = 8;

export interface IssuedSecret {
  raw: string;
  hash: string;
  prefix: string;
}

export function issueSecret(): IssuedSecret {
  const raw = TOKEN_PREFIX + randomBytes(32).toString('base64url');
  return { raw, hash: hashSecret(raw), prefix: raw.slice(0, DISPLAY_PREFIX_LENGTH) };
}

export function hashSecret(raw: string): string {
  return createHash('sha256').update(raw, 'utf8').digest('hex');
}
