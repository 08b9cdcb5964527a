import { OpenTelemetryWorkflowClientInterceptor } from '@temporalio/interceptors-opentelemetry';
import { Client, Connection } from '@temporalio/client';
import { dataConverter } from './data-converter.ts';
import type { CodecKey } from './payload-codec.ts';

// Lazy: the API starts and serves reads while Temporal is still coming up; /readyz tells the difference.
// Every start and signal carries the active trace context in its headers, so the workflow continues the
// trace of the request (or outbox row) that caused it.
export function connectClient(address: string, namespace: string, codecKeys: CodecKey[]): Client {
  return new Client({
    connection: Connection.lazy({ address }),
    namespace,
    dataConverter: dataConverter(codecKeys),
    interceptors: { workflow: [new OpenTelemetryWorkflowClientInterceptor()] },
  });
}
