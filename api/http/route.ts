import type { Middleware } from 'koa';
import { koaBody } from 'koa-body';
import { z } from 'zod';
import type { ZodOpenApiOperationObject, ZodOpenApiPathsObject } from 'zod-openapi';
import type { ErrorCode } from '../../domain/error-codes.ts';
import { AppError } from '../../domain/errors.ts';
import { errorBody, ValidationError } from './errors.ts';
import { inputError } from './input-check.ts';
import { namespaceAlias, unknownFieldError } from './unknown-fields.ts';
import type { AppContext, AppState } from './state.ts';

type Method = 'get' | 'post' | 'put' | 'patch' | 'delete';
type AnyObject = z.ZodObject<z.ZodRawShape>;

// Who may call: `public` needs nothing, `caller` needs a credential (401 without one).
export type Access = 'public' | 'caller';

export interface ResponseSpec {
  description: string;
  schema?: z.ZodType;
  contentType?: string;
}

export interface RouteSpec<P extends AnyObject, Q extends AnyObject, B extends z.ZodType> {
  method: Method;
  path: string;
  summary: string;
  description?: string;
  tag: string;
  access: Access;
  // A write counts toward the per-credential write limit and, with a cookie, must come from our own pages
  // (cross-site.ts); defaults to true for authenticated non-GET routes. POSTs that only read say false.
  write?: boolean;
  params?: P;
  query?: Q;
  body?: B;
  // JSON unless the route says `form` (application/x-www-form-urlencoded): what OAuth's token endpoint takes, and
  // what an HTML form posts.
  bodyType?: 'json' | 'form';
  // Error code used when the body fails validation, instead of `validation_failed` (OAuth's codes; `content required`
  // when, and only when, the content is what is missing).
  bodyError?: (issues: z.core.$ZodIssue[]) => ErrorCode | undefined;
  bodyLimit?: string;
  // Keep the unparsed body (ctx.request.rawBody) for signature checks; the body is then not validated.
  rawBody?: boolean;
  // A body field or query parameter the schemas do not name answers 400 `unknown_field` (unknown-fields.ts);
  // `ignore` drops it instead, for protocols whose clients send more than we read (mem0's; OAuth's, RFC 6749 3.1).
  // Public GETs (pages, documents, probes, redirects back from an identity provider) ignore by default.
  unknownFields?: 'refuse' | 'ignore';
  // Who may call, checked after authentication and before the body is read: a caller refused here costs no
  // parse of a large body.
  guard?: (ctx: AppContext) => Promise<void>;
  responses: Record<number, ResponseSpec>;
  handler: (ctx: AppContext, input: { params: z.infer<P>; query: z.infer<Q>; body: z.infer<B> }) => Promise<void>;
}

export type AnyRoute = RouteSpec<AnyObject, AnyObject, z.ZodType>;

export const defineRoute = <P extends AnyObject = AnyObject, Q extends AnyObject = AnyObject, B extends z.ZodType = z.ZodType>(
  spec: RouteSpec<P, Q, B>,
): AnyRoute => spec as unknown as AnyRoute;

// Routes of a protocol whose clients send fields we do not read, which the protocol says to ignore.
export const ignoringUnknownFields = (routes: AnyRoute[]): AnyRoute[] => routes.map((route) => ({ ...route, unknownFields: 'ignore' }));

const refusesUnknownFields = (route: AnyRoute): boolean =>
  (route.unknownFields ?? (route.access === 'public' && route.method === 'get' ? 'ignore' : 'refuse')) === 'refuse';

export const isWrite = (route: AnyRoute): boolean => route.write ?? (route.access === 'caller' && route.method !== 'get');

const DEFAULT_BODY_LIMIT = '2mb';

const MEDIA_TYPES = { json: 'application/json', form: 'application/x-www-form-urlencoded' } as const;

// koa-body per route so that each route can set its own limit; JSON only, unless the route takes a form. A body of
// any other type is a 415, never read as empty: a form or `text/plain` post is what a cross-site page can send
// without asking, so the few form routes are public ones that take no cookie, or writes the cross-site rule guards.
export function bodyParser(route: AnyRoute): Middleware<AppState> {
  const type = route.bodyType ?? 'json';
  const parse = koaBody({
    json: type === 'json',
    jsonStrict: true,
    jsonLimit: route.bodyLimit ?? DEFAULT_BODY_LIMIT,
    formLimit: route.bodyLimit ?? DEFAULT_BODY_LIMIT,
    text: false,
    urlencoded: type === 'form',
    multipart: false,
    patchKoa: true,
    patchNode: false,
    includeUnparsed: route.rawBody ?? false,
    parsedMethods: ['POST', 'PUT', 'PATCH', 'DELETE'] as never,
  }) as unknown as Middleware<AppState>;
  return async (ctx, next) => {
    if (ctx.request.is(type === 'json' ? 'json' : 'urlencoded') === false) {
      throw new AppError(
        'unsupported_media',
        'unsupported_media_type',
        `send the body as ${MEDIA_TYPES[type]}, not ${ctx.request.type || 'an untyped body'}`,
      );
    }
    await parse(ctx, next);
  };
}

// Validates path, query and body once, then hands typed values to the handler. Every input is first checked
// for what no field may hold (input-check.ts), then for fields the route does not know (unknown-fields.ts).
export function validated(route: AnyRoute): Middleware<AppState> {
  const refuseUnknown = refusesUnknownFields(route);
  return async (ctx) => {
    const params = parse(route.params, ctx.params ?? {}, 'path', false);
    const query = parse(route.query ?? NO_QUERY, listKeysPlain(ctx.query), 'query', refuseUnknown);
    let body: unknown = undefined;
    if (route.body) {
      const sent = (ctx.request as unknown as { body?: unknown }).body ?? {};
      const unfit = inputError(sent);
      if (unfit) throw new ValidationError('body', unfit);
      const raw = namespaceAlias(route.body, sent, 'body');
      const unknown = refuseUnknown ? unknownFieldError(route.body, raw, 'body') : undefined;
      if (unknown) throw unknown;
      const result = route.body.safeParse(raw);
      if (!result.success) throw new ValidationError('body', result.error, route.bodyError?.(result.error.issues));
      body = result.data;
    }
    await route.handler(ctx, { params, query, body } as never);
  };
}

// A list in a query string arrives as repeated parameters (`tags=a&tags=b`, what the OpenAPI document describes),
// or with brackets (`tags[]=a&tags[]=b`, as axios, PHP and Stripe's clients write it): both name the same field, so
// a bracketed list is never dropped as an unknown parameter, which would silently lift its filter.
function listKeysPlain(query: Record<string, string | string[] | undefined>): Record<string, string | string[] | undefined> {
  const plain: Record<string, string | string[] | undefined> = {};
  for (const [key, value] of Object.entries(query)) {
    const name = key.endsWith('[]') ? key.slice(0, -2) : key;
    const before = plain[name];
    plain[name] = before === undefined ? value : [before, value ?? []].flat();
  }
  return plain;
}

const NO_QUERY: AnyObject = z.object({});

function parse(schema: AnyObject | undefined, value: unknown, where: 'path' | 'query', refuseUnknown: boolean): unknown {
  if (!schema) return {};
  const unfit = inputError(value);
  if (unfit) throw new ValidationError(where, unfit);
  const aliased = namespaceAlias(schema, value, where);
  const unknown = refuseUnknown ? unknownFieldError(schema, aliased, where) : undefined;
  if (unknown) throw unknown;
  const result = schema.safeParse(aliased);
  if (!result.success) throw new ValidationError(where, result.error);
  return result.data;
}

const STATUS_TEXT: Record<number, string> = {
  400:
    'Invalid input: `invalid json`; a validation failure with `issues`; `unknown_field`, a body field or query parameter ' +
    'the route does not know (named in `field` and `issues`, with a hint where one helps)',
  401:
    'Missing or invalid credential (`unauthorized`); `reason` says which: `no_credential`, `malformed_header`, ' +
    '`unknown_token`, `revoked_or_expired`',
  403:
    'Authenticated, but the role does not allow this; `cross_site_request`: a cookie-authenticated write from another site ' +
    '(or any browser call from another site to a local instance); `host_not_allowed`: the Host header names neither ' +
    'PUBLIC_BASE_URL nor ALLOWED_HOSTS',
  404: 'Not found, or belongs to another organization',
  409: 'Conflict',
  413: 'The body is larger than the route accepts (`payload_too_large`; 2 MiB unless the route says otherwise)',
  415: 'The body is not `application/json`',
  429:
    'A rate limit hit (`rate-limited`); `Retry-After` gives the seconds to wait. Every answer that spent a slot of a limit ' +
    'carries `RateLimit-Limit`, `RateLimit-Remaining` and `RateLimit-Reset` (seconds until the next slot frees)',
  503:
    'A dependency is out of reach or past its deadline (`database_busy`, `database_timeout`, `database_unavailable`); ' +
    '`Retry-After` gives the seconds to wait',
};

const openApiPath = (route: AnyRoute): string => route.path.replace(/:([A-Za-z_]+)/g, '{$1}');

export function openApiPaths(routes: AnyRoute[]): ZodOpenApiPathsObject {
  const paths: ZodOpenApiPathsObject = {};
  for (const route of routes) {
    const path = openApiPath(route);
    const responses: ZodOpenApiOperationObject['responses'] = {};
    for (const [status, spec] of Object.entries(route.responses)) {
      responses[status as `2${string}`] = {
        description: spec.description,
        ...(spec.schema ? { content: { [spec.contentType ?? 'application/json']: { schema: spec.schema } } } : {}),
      };
    }
    const implied = [
      400,
      ...(route.access === 'caller' ? [401] : []),
      403,
      // Every caller's route: writes are limited, reads may be (READ_RATE_LIMIT_PER_SECOND), searches wait their org's turn.
      ...(route.access === 'caller' ? [429] : []),
      ...(route.params ? [404] : []),
      ...(route.body ? [413, 415] : []),
      503,
    ];
    if (route.bodyType === 'form')
      responses['415'] ??= {
        description: 'The body is not `application/x-www-form-urlencoded`',
        content: { 'application/json': { schema: errorBody } },
      };
    for (const status of implied) {
      const key = String(status) as `4${string}`;
      responses[key] ??= { description: STATUS_TEXT[status]!, content: { 'application/json': { schema: errorBody } } };
    }
    const operation: ZodOpenApiOperationObject = {
      operationId: `${route.method}${route.path.replace(/[/:{}-]+(\w)?/g, (_m, c: string | undefined) => (c ? c.toUpperCase() : ''))}`,
      summary: route.summary,
      ...(route.description ? { description: route.description } : {}),
      tags: [route.tag],
      ...(route.access === 'caller' ? { security: [{ bearer: [] }, { cookie: [] }] } : { security: [] }),
      requestParams: { ...(route.params ? { path: route.params } : {}), ...(route.query ? { query: route.query } : {}) },
      ...(route.body
        ? { requestBody: { required: true, content: { [MEDIA_TYPES[route.bodyType ?? 'json']]: { schema: route.body } } } }
        : {}),
      responses,
    };
    paths[path] = { ...paths[path], [route.method]: operation };
  }
  return paths;
}

// The document says what validated() does: the objects of a request body that refuses unknown fields take no other
// property (`additionalProperties: false`), where the schema does not already say what further keys it takes.
export function closeRequestBodies(document: { paths?: object }, routes: AnyRoute[]): void {
  const paths = document.paths as Record<string, Record<string, unknown>> | undefined;
  for (const route of routes) {
    if (!route.body || !refusesUnknownFields(route)) continue;
    const operation = paths?.[openApiPath(route)]?.[route.method] as { requestBody?: { content?: Record<string, unknown> } } | undefined;
    for (const media of Object.values(operation?.requestBody?.content ?? {})) closeObjects((media as { schema?: unknown }).schema);
  }
}

function closeObjects(node: unknown): void {
  if (Array.isArray(node)) for (const item of node) closeObjects(item);
  else if (node !== null && typeof node === 'object') {
    const schema = node as Record<string, unknown>;
    if (schema.type === 'object' && schema.properties && !('additionalProperties' in schema)) schema.additionalProperties = false;
    for (const value of Object.values(schema)) closeObjects(value);
  }
}
