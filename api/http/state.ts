import type { EntityManager } from '@mikro-orm/postgresql';
import type { ParameterizedContext } from 'koa';
import type { Logger } from 'pino';
import type { CredentialLookups } from '../../domain/accounts/authenticate.ts';
import type { Caller } from '../../domain/accounts/caller.ts';

export interface AppState {
  requestId: string;
  log: Logger;
  // One EntityManager per request, forked from the ORM's root; domain calls run on it.
  em: EntityManager;
  // How the request's credential is resolved (api/http/auth.ts).
  credentials: CredentialLookups;
  caller: Caller | null;
}

export type AppContext = ParameterizedContext<AppState>;
