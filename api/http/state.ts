import type { EntityManager } from '@mikro-orm/postgresql';
import type { ParameterizedContext } from 'koa';
import type { Logger } from 'pino';
import type { Caller } from '../../domain/accounts/caller.ts';

export interface AppState {
  requestId: string;
  log: Logger;
  // One EntityManager per request, forked from the ORM's root; domain calls run on it.
  em: EntityManager;
  caller: Caller | null;
}

export type AppContext = ParameterizedContext<AppState>;
