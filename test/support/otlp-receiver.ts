import { createServer, type Server } from 'node:http';
import { freePort } from './ports.ts';

export interface ReceivedSpan {
  service: string;
  traceId: string;
  spanId: string;
  parentSpanId: string;
  name: string;
  attributes: Record<string, unknown>;
}

interface OtlpValue {
  stringValue?: string;
  intValue?: string | number;
  boolValue?: boolean;
  doubleValue?: number;
}
type OtlpAttributes = { key: string; value: OtlpValue }[];
const attributesOf = (list: OtlpAttributes = []) =>
  Object.fromEntries(list.map(({ key, value }) => [key, value.stringValue ?? value.intValue ?? value.boolValue ?? value.doubleValue]));

// An OpenTelemetry collector's front door for traces over OTLP/HTTP with JSON bodies, as the service's
// exporter sends them: keeps every span it is sent.
export class OtlpReceiver {
  readonly spans: ReceivedSpan[] = [];
  #server: Server | undefined;
  endpoint = '';

  async start(): Promise<void> {
    const port = await freePort();
    this.#server = createServer((req, res) => {
      let body = '';
      req.on('data', (c: Buffer) => (body += c.toString('utf8')));
      req.on('end', () => {
        if (req.url === '/v1/traces') {
          const parsed = JSON.parse(body) as {
            resourceSpans: {
              resource: { attributes: OtlpAttributes };
              scopeSpans: {
                spans: { traceId: string; spanId: string; parentSpanId?: string; name: string; attributes?: OtlpAttributes }[];
              }[];
            }[];
          };
          for (const rs of parsed.resourceSpans) {
            const service = String(attributesOf(rs.resource.attributes)['service.name']);
            for (const ss of rs.scopeSpans)
              for (const s of ss.spans)
                this.spans.push({
                  service,
                  traceId: s.traceId,
                  spanId: s.spanId,
                  parentSpanId: s.parentSpanId ?? '',
                  name: s.name,
                  attributes: attributesOf(s.attributes),
                });
          }
        }
        res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
      });
    });
    await new Promise<void>((r) => this.#server!.listen(port, '127.0.0.1', () => r()));
    this.endpoint = `http://127.0.0.1:${port}`;
  }

  close(): Promise<void> {
    return new Promise((resolve) => (this.#server ? this.#server.close(() => resolve()) : resolve()));
  }
}
