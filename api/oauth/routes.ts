import type { ApiDeps } from '../deps.ts';
import { ignoringUnknownFields, type AnyRoute } from '../http/route.ts';
import { authorizeRoutes } from './authorize.ts';
import { authorizationServerRoutes } from './metadata.ts';
import { registrationRoutes } from './register.ts';
import { tokenEndpointRoutes } from './token.ts';

// The service as the OAuth 2.1 authorization server of its MCP endpoint (docs/api-decisions.md, "Connecting with OAuth").
// OAuth's parameters and client metadata the server does not understand are ignored (RFC 6749 3.1, RFC 7591 2).
export const oauthServerRoutes = (deps: ApiDeps): AnyRoute[] =>
  ignoringUnknownFields([
    ...authorizationServerRoutes(deps.config.publicBaseUrl),
    ...registrationRoutes(deps.config),
    ...authorizeRoutes(deps),
    ...tokenEndpointRoutes(deps.config),
  ]);
