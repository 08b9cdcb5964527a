import { createHash } from 'node:crypto';

// PKCE (RFC 7636) with S256 only, as OAuth 2.1 asks: a challenge is the base64url SHA-256 of a verifier of
// 43 to 128 unreserved characters.
export const CODE_CHALLENGE = /^[A-Za-z0-9_-]{43}$/;
const CODE_VERIFIER = /^[A-Za-z0-9._~-]{43,128}$/;

export const verifierMatches = (verifier: string, challenge: string): boolean =>
  CODE_VERIFIER.test(verifier) && createHash('sha256').update(verifier, 'ascii').digest('base64url') === challenge;
