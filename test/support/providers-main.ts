// The outside services the API calls, as local stand-ins for a whole-API run outside vitest (scripts/fuzz.sh):
// the LLM providers' protocols (LlmServer) and the payment processor (stripe-mock). Writes the service's
// settings for them as `NAME=value` lines to the file named by its argument, then runs until it is stopped.
import { writeFile } from 'node:fs/promises';
import { llmEnv } from './llm-env.ts';
import { LlmServer } from './llm-server.ts';
import { startStripeMock } from './stripe-mock.ts';

const envFile = process.argv[2];
if (!envFile) throw new Error('usage: node test/support/providers-main.ts <env file>');
const llm = new LlmServer();
await llm.start();
const stripe = await startStripeMock();
const env = { ...llmEnv(llm), STRIPE_SECRET_KEY: 'sk_test_fuzz', STRIPE_WEBHOOK_SECRET: 'whsec_fuzz', STRIPE_API_BASE: stripe.url };
await writeFile(
  envFile,
  Object.entries(env)
    .map(([k, v]) => `${k}=${v}\n`)
    .join(''),
);
const stop = () => {
  stripe.stop();
  void llm.close().finally(() => process.exit(0));
};
process.on('SIGTERM', stop);
process.on('SIGINT', stop);
