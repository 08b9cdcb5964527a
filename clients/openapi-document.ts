// The service's OpenAPI document (what /api/openapi.json serves, built from its own zod schemas), built with
// no server: the route table touches no connection. The clients' generators read it.
import { apiRoutes } from '../api/app.ts';
import { externalClients, type ApiDeps } from '../api/deps.ts';
import { buildOpenApi } from '../api/system/openapi.ts';
import { loadConfig } from '../infra/config.ts';

export function serviceOpenApiDocument(): ReturnType<typeof buildOpenApi> {
  const config = loadConfig({ SERVICE_MODE: 'local' });
  const deps = { config, localCaller: null, embedder: null, clients: externalClients(config) } as unknown as ApiDeps;
  return buildOpenApi(apiRoutes(deps), 'http://127.0.0.1:3000');
}
