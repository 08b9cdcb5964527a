import type { Logger } from 'pino';
import {
  hasByok,
  llmError,
  type ByokKeys,
  type Llm,
  type LlmAnswer,
  type LlmFailure,
  type LlmTask,
  type Via,
} from '../../domain/llm/port.ts';
import type { Config } from '../config.ts';
import { protocolCaller, type Protocol } from './protocols.ts';

export interface ProviderSettings {
  protocol: Protocol;
  baseUrl: string | undefined;
  apiKey: string | undefined;
  model: string;
}

export interface LlmSettings {
  primary: ProviderSettings;
  alternate: ProviderSettings;
  // Per attempt; the SDKs make up to 1 + maxRetries attempts per provider.
  timeoutMs: number;
  maxRetries: number;
}

interface Route {
  via: Via;
  provider: ProviderSettings;
  apiKey: string;
}

// Outcome of one provider: the failure class decides whether the next provider is tried.
function classify(err: unknown): LlmFailure {
  const status = (err as { status?: unknown }).status;
  if (typeof status !== 'number') return 'unavailable'; // connection refused, reset, timed out
  if (status === 408 || status === 409 || status === 429 || status >= 500) return 'unavailable';
  return 'rejected';
}

// Picks the credentials for a call and fails over: with the caller's own keys, the default provider with
// byok_primary_key then the alternate with byok_alternate_key (the server's keys are never used for a BYOK
// call); otherwise the default provider then the alternate, each with the server's key. Keys appear in no
// log line and no error message.
export class LlmRouter implements Llm {
  readonly #settings: LlmSettings;
  readonly #logger: Logger;

  constructor(settings: LlmSettings, logger: Logger) {
    this.#settings = settings;
    this.#logger = logger;
  }

  #routes(byok: ByokKeys | undefined): Route[] {
    const { primary, alternate } = this.#settings;
    const candidates: [Via, ProviderSettings, string | undefined][] = hasByok(byok)
      ? [
          ['byok', primary, byok.primary],
          ['byok', alternate, byok.alternate],
        ]
      : [
          ['primary', primary, primary.apiKey],
          ['alternate', alternate, alternate.apiKey],
        ];
    return candidates
      .filter((c): c is [Via, ProviderSettings, string] => Boolean(c[2]))
      .map(([via, provider, apiKey]) => ({ via, provider, apiKey }));
  }

  configured(byok?: ByokKeys): boolean {
    return this.#routes(byok).length > 0;
  }

  async run<T>(task: LlmTask<T>, byok?: ByokKeys): Promise<LlmAnswer<T>> {
    const routes = this.#routes(byok);
    if (routes.length === 0) throw llmError('rejected', 'no LLM provider is configured for this call');
    const failures: LlmFailure[] = [];
    for (const route of routes) {
      const call = protocolCaller(route.provider.protocol, {
        apiKey: route.apiKey,
        baseUrl: route.provider.baseUrl,
        timeoutMs: this.#settings.timeoutMs,
        maxRetries: this.#settings.maxRetries,
      });
      try {
        const { raw, usage } = await call(task as LlmTask<unknown>, route.provider.model);
        const parsed = task.schema.safeParse(raw);
        if (parsed.success) return { value: parsed.data, via: route.via, usage };
        failures.push('malformed');
        this.#logger.warn({ task: task.name, protocol: route.provider.protocol, via: route.via }, 'LLM answer did not match the schema');
      } catch (err) {
        const failure = classify(err);
        failures.push(failure);
        this.#logger.warn(
          { task: task.name, protocol: route.provider.protocol, via: route.via, failure, status: (err as { status?: unknown }).status },
          'LLM call failed',
        );
      }
    }
    // Worth retrying later if any provider was merely unavailable.
    const failure: LlmFailure = failures.includes('unavailable')
      ? 'unavailable'
      : failures.includes('malformed')
        ? 'malformed'
        : 'rejected';
    throw llmError(failure, `no provider answered ${task.name} (${failures.join(', ')})`);
  }
}

// The service's provider layer as configured by the LLM_* variables.
export function createLlm(config: Config, logger: Logger): LlmRouter {
  return new LlmRouter(
    {
      primary: {
        protocol: config.LLM_PRIMARY_PROVIDER,
        baseUrl: config.LLM_PRIMARY_BASE_URL,
        apiKey: config.LLM_PRIMARY_API_KEY,
        model: config.LLM_PRIMARY_MODEL,
      },
      alternate: {
        protocol: config.LLM_ALTERNATE_PROVIDER,
        baseUrl: config.LLM_ALTERNATE_BASE_URL,
        apiKey: config.LLM_ALTERNATE_API_KEY,
        model: config.LLM_ALTERNATE_MODEL,
      },
      timeoutMs: config.LLM_TIMEOUT_MS,
      maxRetries: config.LLM_MAX_RETRIES,
    },
    logger,
  );
}
