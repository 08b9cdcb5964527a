import cors from '@koa/cors';
import type { Payload } from '@temporalio/common';
import type { Middleware } from 'koa';
import { z } from 'zod';
import { isOperator } from '../../domain/accounts/operators.ts';
import { AppError } from '../../domain/errors.ts';
import { EncryptionCodec } from '../../temporal/payload-codec.ts';
import type { ApiDeps } from '../deps.ts';
import { errorBody } from '../http/errors.ts';
import { callerOf } from '../http/auth.ts';
import { defineRoute, type AnyRoute } from '../http/route.ts';
import type { AppState } from '../http/state.ts';
import { postTemporalCodec } from './descriptions.ts';

// The remote codec protocol of the Temporal Web UI (and `temporal --codec-endpoint`): the UI posts the
// payloads it shows to `<endpoint>/decode` (and `/encode` what an operator sends) as proto3 JSON, bytes in
// base64. Point the UI at `<PUBLIC_BASE_URL>/api/temporal/codec`.
export const CODEC_PATH = '/api/temporal/codec';

const payloadJson = z.object({
  metadata: z.record(z.string().max(256), z.base64()).optional(),
  data: z.base64().optional(),
});
const codecBody = z.object({ payloads: z.array(payloadJson).max(1000) });
type PayloadJson = z.infer<typeof payloadJson>;

const fromJson = (p: PayloadJson): Payload => ({
  metadata: Object.fromEntries(Object.entries(p.metadata ?? {}).map(([k, v]) => [k, Buffer.from(v, 'base64')])),
  data: Buffer.from(p.data ?? '', 'base64'),
});
const toJson = (p: Payload): PayloadJson => ({
  metadata: Object.fromEntries(Object.entries(p.metadata ?? {}).map(([k, v]) => [k, Buffer.from(v ?? []).toString('base64')])),
  data: Buffer.from(p.data ?? []).toString('base64'),
});

// The Web UI runs on its own origin and calls from the browser: only that origin may read the answers,
// with the operator's cookie when the UI is set to include credentials.
export function codecCors(uiOrigin: string): Middleware<AppState> {
  const allow = cors({
    origin: uiOrigin,
    credentials: true,
    allowMethods: 'POST',
    allowHeaders: ['content-type', 'x-namespace', 'authorization'],
    maxAge: 600,
  });
  return (ctx, next) => (ctx.path.startsWith(`${CODEC_PATH}/`) ? (allow(ctx as never, next) as Promise<void>) : next());
}

export function codecRoutes(deps: ApiDeps): AnyRoute[] {
  const codec = new EncryptionCodec(deps.config.codecKeys);
  const operatorEmails = deps.config.OPERATOR_EMAILS ?? [];
  const route = (direction: 'encode' | 'decode') =>
    defineRoute({
      method: 'post',
      path: `${CODEC_PATH}/${direction}`,
      tag: 'system',
      access: 'caller',
      write: false,
      summary:
        direction === 'decode'
          ? "Decrypt payloads of Temporal's history (operators only)"
          : 'Encrypt payloads for Temporal (operators only)',
      description: postTemporalCodec,
      body: codecBody,
      bodyLimit: '8mb',
      responses: {
        200: { description: 'The payloads, in order', schema: codecBody },
        403: { description: '`operator_required`', schema: errorBody },
      },
      guard: async (ctx) => {
        if (!(await isOperator(ctx.state.em, callerOf(ctx), operatorEmails))) {
          throw new AppError(
            'forbidden',
            'operator_required',
            'only operators of the service (OPERATOR_EMAILS, verified e-mail) may read or write Temporal payloads',
          );
        }
      },
      handler: async (ctx, { body }) => {
        const payloads = body.payloads.map(fromJson);
        try {
          const out = direction === 'decode' ? await codec.decode(payloads) : await codec.encode(payloads);
          ctx.body = { payloads: out.map(toJson) };
        } catch (err) {
          throw new AppError('invalid', 'payload_undecryptable', (err as Error).message);
        }
      },
    });
  return [route('encode'), route('decode')];
}
