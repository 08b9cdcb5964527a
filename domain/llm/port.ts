import type { z } from 'zod';
import type { Plan } from '../accounts/enums.ts';
import { AppError } from '../errors.ts';

// What the domain asks of a language model, independent of provider and wire protocol. The provider layer
// (infra/llm) implements `Llm`; activities and API handlers pass it in.

// Which credentials answered: the server's default provider, its alternate, or the caller's own key.
export type Via = 'primary' | 'alternate' | 'byok';

// A caller's own keys for the default and the alternate provider, used for one call and never stored.
export interface ByokKeys {
  primary?: string | undefined;
  alternate?: string | undefined;
}

export interface Turn {
  role: 'user' | 'assistant';
  content: string;
}

// One structured request: the model must answer with a value of `schema` (strict objects, every field
// required, nullable where optional, so both providers' structured-output modes accept it).
export interface LlmTask<T> {
  name: string;
  description: string;
  system: string;
  messages: Turn[];
  schema: z.ZodType<T>;
  maxTokens: number;
}

// Tokens a call took, as the provider counted them (0 when it did not say).
export interface LlmUsage {
  input: number;
  output: number;
}

export interface LlmAnswer<T> {
  value: T;
  via: Via;
  usage: LlmUsage;
}

export interface Llm {
  // Whether a call with these keys (or none) has any provider to go to.
  configured(byok?: ByokKeys): boolean;
  run<T>(task: LlmTask<T>, byok?: ByokKeys): Promise<LlmAnswer<T>>;
}

// unavailable: every provider was down, timed out or rate-limited (worth retrying later); rejected: a
// provider refused the request (a bad key); malformed: the model's answer did not fit the schema.
export type LlmFailure = 'unavailable' | 'rejected' | 'malformed';

export function llmError(failure: LlmFailure, detail: string): AppError {
  if (failure === 'unavailable') return new AppError('unavailable', 'llm_unavailable', detail);
  return new AppError('upstream', failure === 'rejected' ? 'llm_rejected' : 'llm_malformed_output', detail);
}

export const hasByok = (byok: ByokKeys | undefined): byok is ByokKeys => Boolean(byok?.primary || byok?.alternate);

// The caller's keys as a request body or a memory's metadata carries them (`byok_primary_key`,
// `byok_alternate_key`), or undefined when there are none.
export function byokOf(source: Record<string, unknown> | undefined): ByokKeys | undefined {
  const key = (value: unknown) => (typeof value === 'string' && value ? value : undefined);
  const keys = { primary: key(source?.byok_primary_key), alternate: key(source?.byok_alternate_key) };
  return hasByok(keys) ? keys : undefined;
}

export const planRequired = (detail: string, upgradeUrl: string): AppError =>
  new AppError('payment_required', 'plan_required', detail, { upgrade_url: upgradeUrl });

// LLM features need a paid plan or the caller's own key, and a provider to call.
export function requireLlm(llm: Llm, plan: Plan, byok: ByokKeys | undefined, upgradeUrl: string): void {
  if (plan === 'free' && !hasByok(byok))
    throw planRequired(
      'Language-model features (chat, extraction, merges) are part of the paid plan, or run with your own provider key ' +
        `(byok_primary_key or byok_alternate_key). Upgrade at ${upgradeUrl}`,
      upgradeUrl,
    );
  if (!llm.configured(byok)) throw new AppError('unavailable', 'llm_not_configured', 'no LLM provider is configured on this server');
}
