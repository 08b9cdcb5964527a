import { compression } from './http/compression.ts';
import Router from '@koa/router';
import { createServer, type Server } from 'node:http';
import Koa from 'koa';
import type { Middleware } from 'koa';
import { oauthRoutes } from './auth/oauth.ts';
import { mailLinkRoutes } from './auth/mail-links.ts';
import { authRoutes } from './auth/routes.ts';
import { billingRoutes } from './billing/routes.ts';
import { tokenRoutes } from './auth/tokens.ts';
import type { ApiDeps } from './deps.ts';
import { eventRoutes } from './events/routes.ts';
import { exportRoutes } from './memories/exports.ts';
import { embeddingRoutes } from './memories/embeddings.ts';
import { batchRoutes } from './memories/batch.ts';
import { conversationRoutes } from './conversations/routes.ts';
import { mem0Routes } from './compat/mem0.ts';
import { deletionRoutes } from './memories/deletions.ts';
import { memoryRoutes } from './memories/routes.ts';
import { searchRoutes } from './memories/search.ts';
import { orgRoutes } from './orgs/routes.ts';
import { chatRoutes } from './chat/routes.ts';
import { chatSessionRoutes } from './chat/sessions.ts';
import { consolidationRoutes } from './consolidate/routes.ts';
import { entityRoutes } from './entities/routes.ts';
import { projectRoutes } from './projects/routes.ts';
import { recallRoutes } from './recall/routes.ts';
import { runbookRoutes } from './procedural/routes.ts';
import { threadRoutes } from './threads/routes.ts';
import { webhookRoutes } from './webhooks/routes.ts';
import { requireCaller } from './http/auth.ts';
import { refuseCrossSiteWrites } from './http/cross-site.ts';
import { refuseOtherSitesLocally, refuseUnknownHosts } from './http/host-check.ts';
import { errorHandler } from './http/errors.ts';
import { rateLimit } from './http/rate-limit.ts';
import { requestContext } from './http/request-context.ts';
import { securityHeaders } from './http/security-headers.ts';
import { bodyParser, isWrite, validated, type AnyRoute } from './http/route.ts';
import type { AppContext, AppState } from './http/state.ts';
import { dashboardRoutes } from './dashboard/routes.ts';
import { docsPagesRoutes } from './system/docs-pages.ts';
import { llmsTxtRoutes } from './system/llms-txt.ts';
import { docsRoutes } from './system/openapi.ts';
import { CODEC_PATH, codecCors, codecRoutes } from './temporal/codec.ts';
import { MCP_PATH, mcpHandler } from './mcp/endpoint.ts';
import { bearerChallenge, protectedResourceRoutes } from './mcp/protected-resource.ts';
import { oauthServerRoutes } from './oauth/routes.ts';
import { systemRoutes } from './system/routes.ts';
import { metricsRoutes } from './system/metrics.ts';
import { checkResponses } from './http/response-check.ts';
import { QueryVectors } from '../domain/search/query-vectors.ts';
import { searchSlotCount, searchSlots } from '../domain/search/search-slots.ts';
import { OrgActivity } from '../domain/org-activity.ts';
import { batchSlots } from '../domain/memories/batch-slots.ts';
import { queryVectorsServed } from '../infra/metrics.ts';
import { errorJson } from '../domain/error-codes.ts';

// The API's routes: what /api/openapi.json documents and the TypeScript client is generated from.
// `activity`: the orgs with a request under way, which the search slots leave room for (createApp counts them).
export function apiRoutes(deps: ApiDeps, activity = new OrgActivity()): AnyRoute[] {
  // One cache of recent queries' vectors for every route that searches by meaning.
  const queries = new QueryVectors(deps.embedder, deps.config.QUERY_VECTOR_CACHE_ENTRIES, (source, count) =>
    queryVectorsServed.inc({ source }, count),
  );
  // One set of search slots, shared by the orgs in turn, for every route that searches for a caller.
  const { SEARCH_SLOTS, DATABASE_POOL_MAX, ORG_BUSY_SHARE } = deps.config;
  const slotCount = SEARCH_SLOTS ?? searchSlotCount(DATABASE_POOL_MAX);
  const slots = searchSlots(slotCount, activity, ORG_BUSY_SHARE);
  // As many slots for batch writes, shared the same way.
  const batches = batchSlots(slotCount, activity, ORG_BUSY_SHARE);
  return [
    ...systemRoutes(deps),
    ...llmsTxtRoutes(deps.config.publicBaseUrl),
    ...docsPagesRoutes(),
    ...protectedResourceRoutes(deps.config.publicBaseUrl),
    ...oauthServerRoutes(deps),
    ...authRoutes(deps),
    ...mailLinkRoutes(deps),
    ...oauthRoutes(deps),
    ...tokenRoutes(),
    ...eventRoutes(),
    ...exportRoutes(deps),
    ...embeddingRoutes(deps),
    ...batchRoutes(deps, batches),
    ...conversationRoutes(deps),
    ...mem0Routes(deps, queries, slots, batches),
    ...deletionRoutes(),
    ...searchRoutes(deps, queries, slots),
    ...memoryRoutes(deps, slots),
    ...projectRoutes(),
    ...entityRoutes(),
    ...threadRoutes(),
    ...recallRoutes(),
    ...runbookRoutes(),
    ...consolidationRoutes(deps),
    ...chatRoutes(deps, queries),
    ...chatSessionRoutes(),
    ...orgRoutes(deps),
    ...webhookRoutes(deps),
    ...billingRoutes(deps),
    ...codecRoutes(deps),
  ];
}

// Everything the app serves: the API, Prometheus metrics, the dashboard's pages, and the API's own documentation.
function buildRoutes(deps: ApiDeps, activity: OrgActivity): AnyRoute[] {
  const routes = apiRoutes(deps, activity);
  return [...routes, ...metricsRoutes(deps), ...dashboardRoutes(), ...docsRoutes(() => routes, deps.config.publicBaseUrl)];
}

// How a response's stream fails when its client has gone.
const CLIENT_GONE = new Set(['ERR_STREAM_PREMATURE_CLOSE', 'ECONNRESET', 'EPIPE', 'ECONNABORTED']);

// Each route runs: caller resolution (401 first) -> write or read limit -> JSON body (per-route size limit) -> validation -> handler.
// `activity`: the orgs with a request under way here (api/main.ts also writes them for the worker).
export function createApp(deps: ApiDeps, activity = new OrgActivity()): Koa<AppState> {
  const app = new Koa<AppState>();
  // What fails once a response has begun (a streamed body; a client gone in the middle of a download) reaches Koa,
  // not errorHandler: it is logged here, through the app's logger, instead of Koa's default print to stderr. A
  // client that left is nothing that failed on our side.
  app.on('error', (err: NodeJS.ErrnoException) => {
    if (CLIENT_GONE.has(err.code ?? '')) deps.logger.debug({ err: err.message }, 'the client left before its response ended');
    else deps.logger.error({ err }, 'a response failed after it began');
  });
  // The client's address (sign-in limits, captcha) is the socket's, or, behind N trusted proxies, the N-th
  // X-Forwarded-For entry from the right: the one the outermost trusted proxy wrote. Entries left of it are
  // written by the client and never believed.
  app.proxy = deps.config.trustedProxies > 0;
  app.maxIpsCount = deps.config.trustedProxies;
  const router = new Router<AppState>();
  const authenticate = requireCaller(deps.localCaller, bearerChallenge(deps.config.publicBaseUrl), activity);
  const crossSite = refuseCrossSiteWrites(deps.config.publicBaseUrl);
  const writeLimit = rateLimit('write', deps.config.WRITE_RATE_LIMIT_PER_MINUTE);
  const readLimit = rateLimit('read', deps.config.READ_RATE_LIMIT_PER_SECOND);
  const routes = buildRoutes(deps, activity);
  for (const route of routes) {
    const chain: Middleware<AppState>[] = [];
    if (deps.validateResponses) chain.push(checkResponses(route));
    if (route.access === 'caller') chain.push(authenticate);
    if (isWrite(route)) chain.push(crossSite, writeLimit);
    else if (route.access === 'caller') chain.push(readLimit);
    const { guard } = route;
    if (guard) {
      chain.push(async (ctx, next) => {
        await guard(ctx as AppContext);
        await next();
      });
    }
    if (route.body) chain.push(bodyParser(route));
    chain.push(validated(route));
    router.register(route.path, [route.method.toUpperCase()], chain as never);
  }
  router.all(MCP_PATH, authenticate, crossSite, mcpHandler(app));
  app.use(requestContext(deps.orm, deps.logger));
  app.use(securityHeaders);
  app.use(compression);
  app.use(errorHandler);
  app.use(refuseUnknownHosts(deps.config.publicBaseUrl, deps.config.ALLOWED_HOSTS));
  if (deps.localCaller) {
    const uiOrigin = deps.config.temporalUiOrigin;
    app.use(
      refuseOtherSitesLocally(deps.config.publicBaseUrl, (ctx) => ctx.path.startsWith(`${CODEC_PATH}/`) && ctx.get('origin') === uiOrigin),
    );
  }
  app.use(codecCors(deps.config.temporalUiOrigin));
  app.use(router.routes());
  app.use(router.allowedMethods({ throw: true }));
  app.use(async (ctx) => {
    ctx.status = 404;
    ctx.body = errorJson('not found', `route ${ctx.method} ${ctx.path} not found`);
  });
  return app;
}

// Request line and headers up to 64 KiB (Node's default is 16 KiB): an identity provider's callback can carry
// long codes, and a refusal at that level (431) would come without a JSON body.
const MAX_HEADER_BYTES = 65_536;

export function listen(app: Koa<AppState>, port: number, host: string): Promise<Server> {
  return new Promise((resolve) => {
    const server = createServer({ maxHeaderSize: MAX_HEADER_BYTES }, app.callback());
    server.listen(port, host, () => resolve(server));
  });
}
