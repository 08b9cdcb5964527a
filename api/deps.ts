import type { MikroORM } from '@mikro-orm/postgresql';
import type { Client } from '@temporalio/client';
import type { Logger } from 'pino';
import type { Caller } from '../domain/accounts/caller.ts';
import type { Embedder } from '../domain/store/embedder.ts';
import type { Llm } from '../domain/llm/port.ts';
import type { Config } from '../infra/config.ts';

// What the HTTP layer is built over; tests build it with their own config and connections.
export interface ApiDeps {
  config: Config;
  orm: MikroORM;
  temporal: Client;
  logger: Logger;
  llm: Llm;
  // Null when no embedding model is configured or it failed to load: semantic search then answers 503.
  embedder: Embedder | null;
  // Set in SERVICE_MODE=local: the implicit caller of every request.
  localCaller: Caller | null;
  // Tests turn this on to check every response against its declared schema.
  validateResponses?: boolean;
}
