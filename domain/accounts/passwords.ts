import { hash, verify } from '@node-rs/argon2';

// Argon2id with the OWASP baseline (19 MiB, 2 passes): memory-hard, so guessing costs memory as well as time.
const ARGON2ID = 2; // Algorithm.Argon2id, a const enum that verbatimModuleSyntax cannot import
const OPTIONS = { algorithm: ARGON2ID, memoryCost: 19_456, timeCost: 2, parallelism: 1 } as const;

export const PASSWORD_MIN_LENGTH = 10;
export const PASSWORD_MAX_LENGTH = 1024;

export function hashPassword(password: string): Promise<string> {
  return hash(password, OPTIONS);
}

// A hash of a password nobody knows, verified when the account does not exist so that both paths
// cost the same and response time does not reveal which e-mail addresses have accounts.
let decoy: Promise<string> | undefined;

export async function verifyPassword(stored: string | null, password: string): Promise<boolean> {
  if (stored === null) {
    decoy ??= hashPassword('decoy-password-that-matches-nothing');
    await verify(await decoy, password).catch(() => false);
    return false;
  }
  try {
    return await verify(stored, password);
  } catch {
    return false;
  }
}
