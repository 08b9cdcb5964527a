import type { ApiDeps } from '../deps.ts';
import type { AnyRoute } from '../http/route.ts';
import { authorizeRoutes } from './authorize.ts';
import { authorizationServerRoutes } from './metadata.ts';
import { registrationRoutes } from './register.ts';
import { tokenEndpointRoutes } from './token.ts';

// The service as the OAuth 2.1 authorization server of its MCP endpoint (docs/api-decisions.md, "Connecting with OAuth").
export const oauthServerRoutes = (deps: ApiDeps): AnyRoute[] => [
  ...authorizationServerRoutes(deps.config.publicBaseUrl),
  ...registrationRoutes(deps.config),
  ...authorizeRoutes(deps),
  ...tokenEndpointRoutes(deps.config),
];
