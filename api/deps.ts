import type { MikroORM } from '@mikro-orm/postgresql';
import type { Client } from '@temporalio/client';
import type { Logger } from 'pino';
import type { Caller } from '../domain/accounts/caller.ts';
import type { Embedder } from '../domain/store/embedder.ts';
import type { Llm } from '../domain/llm/port.ts';
import type Stripe from 'stripe';
import { createCaptchaCheck, type CaptchaCheck } from '../infra/captcha.ts';
import type { Config } from '../infra/config.ts';
import { OidcClient } from '../infra/oidc.ts';
import { createStripe } from '../infra/stripe.ts';

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
  clients: ExternalClients;
  // Tests turn this on to check every response against its declared schema.
  validateResponses?: boolean;
}

// The other services the API calls: the identity provider, the payment processor and the captcha verifier.
export interface ExternalClients {
  // Null when OIDC_ISSUER, OIDC_CLIENT_ID and OIDC_CLIENT_SECRET are not all set.
  oidc: OidcClient | null;
  // Null without STRIPE_SECRET_KEY.
  stripe: Stripe | null;
  // Requires nothing without CAPTCHA_SECRET.
  captcha: CaptchaCheck;
}

export const OIDC_CALLBACK_PATH = '/api/auth/oauth/idp/callback';

export function externalClients(config: Config): ExternalClients {
  const { OIDC_ISSUER: issuer, OIDC_CLIENT_ID: clientId, OIDC_CLIENT_SECRET: clientSecret } = config;
  return {
    oidc:
      issuer && clientId && clientSecret
        ? new OidcClient({ issuer, clientId, clientSecret, redirectUri: `${config.publicBaseUrl}${OIDC_CALLBACK_PATH}` })
        : null,
    stripe: config.STRIPE_SECRET_KEY ? createStripe(config.STRIPE_SECRET_KEY, config.STRIPE_API_BASE) : null,
    captcha: createCaptchaCheck(config.CAPTCHA_SECRET, config.CAPTCHA_VERIFY_URL),
  };
}
