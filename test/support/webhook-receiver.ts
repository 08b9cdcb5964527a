import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import { freePort } from './ports.ts';

export interface Received {
  headers: IncomingHttpHeaders;
  body: string;
}

// A local webhook receiver: records every request and answers with the next scripted status (200 when the
// script is empty).
export class WebhookReceiver {
  readonly received: Received[] = [];
  readonly script: number[] = [];
  #server: Server | undefined;
  url = '';

  async start(): Promise<void> {
    const port = await freePort();
    this.#server = createServer((req, res) => {
      let body = '';
      req.on('data', (c: Buffer) => (body += c.toString('utf8')));
      req.on('end', () => {
        this.received.push({ headers: req.headers, body });
        res.statusCode = this.script.shift() ?? 200;
        res.end('ok');
      });
    });
    await new Promise<void>((r) => this.#server!.listen(port, '127.0.0.1', () => r()));
    this.url = `http://127.0.0.1:${port}/hook`;
  }

  // The webhook-ids each memory's deliveries came under (a retried attempt keeps its id), by memory id.
  webhookIdsByMemory(): Map<string, Set<string>> {
    const ids = new Map<string, Set<string>>();
    for (const r of this.received) {
      const memoryId = (JSON.parse(r.body) as { data: { id: string } }).data.id;
      ids.set(memoryId, (ids.get(memoryId) ?? new Set()).add(String(r.headers['webhook-id'])));
    }
    return ids;
  }

  close(): Promise<void> {
    return new Promise((resolve) => (this.#server ? this.#server.close(() => resolve()) : resolve()));
  }
}
