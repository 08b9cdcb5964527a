import type { LlmServer } from './llm-server.ts';

export const SERVER_PRIMARY_KEY = 'sk-ant-server-primary';
export const SERVER_ALTERNATE_KEY = 'sk-server-alternate';

// The service's LLM_* settings pointed at the local provider server: the default provider speaks the
// Anthropic protocol, the alternate the OpenAI one. No SDK-level retries, so failover shows at once.
export const llmEnv = (server: LlmServer): Record<string, string> => ({
  LLM_PRIMARY_PROVIDER: 'anthropic',
  LLM_PRIMARY_BASE_URL: server.url,
  LLM_PRIMARY_API_KEY: SERVER_PRIMARY_KEY,
  LLM_PRIMARY_MODEL: 'claude-test',
  LLM_ALTERNATE_PROVIDER: 'openai',
  LLM_ALTERNATE_BASE_URL: `${server.url}/v1`,
  LLM_ALTERNATE_API_KEY: SERVER_ALTERNATE_KEY,
  LLM_ALTERNATE_MODEL: 'gpt-test',
  LLM_MAX_RETRIES: '0',
  LLM_TIMEOUT_MS: '5000',
});
