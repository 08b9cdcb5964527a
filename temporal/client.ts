import { OpenTelemetryWorkflowClientInterceptor } from '@temporalio/interceptors-opentelemetry';
import { Client, Connection, type TLSConfig } from '@temporalio/client';
import type { TemporalEndpoint } from '../infra/config.ts';
import { dataConverter } from './data-converter.ts';
import type { CodecKey } from './payload-codec.ts';

// What both the client's and the worker's connections take: the address, TLS (with mTLS when a client
// certificate is configured) and the API key.
export function connectionOptions(endpoint: TemporalEndpoint): { address: string; tls?: TLSConfig; apiKey?: string } {
  const { tls } = endpoint;
  return {
    address: endpoint.address,
    ...(tls
      ? {
          tls: {
            ...(tls.serverName ? { serverNameOverride: tls.serverName } : {}),
            ...(tls.ca ? { serverRootCACertificate: tls.ca } : {}),
            ...(tls.cert && tls.key ? { clientCertPair: { crt: tls.cert, key: tls.key } } : {}),
          },
        }
      : {}),
    ...(endpoint.apiKey ? { apiKey: endpoint.apiKey } : {}),
  };
}

// Lazy: the API starts and serves reads while Temporal is still coming up; /readyz tells the difference.
// Every start and signal carries the active trace context in its headers, so the workflow continues the
// trace of the request (or outbox row) that caused it.
export function connectClient(endpoint: TemporalEndpoint, namespace: string, codecKeys: CodecKey[]): Client {
  return new Client({
    connection: Connection.lazy(connectionOptions(endpoint)),
    namespace,
    dataConverter: dataConverter(codecKeys),
    interceptors: { workflow: [new OpenTelemetryWorkflowClientInterceptor()] },
  });
}
