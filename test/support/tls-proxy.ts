import { readFile } from 'node:fs/promises';
import { connect, createServer as createTcpServer, type Server as TcpServer, type Socket } from 'node:net';
import { createServer as createTlsServer, TLSSocket } from 'node:tls';
import { freePort } from './ports.ts';
import type { Certificates } from './certificates.ts';

// TLS in front of a plaintext server, as a TLS-terminating proxy stands in front of a database or a Temporal
// cluster: the project's PostgreSQL build and the Temporal dev server have no TLS of their own. The service
// connects to it exactly as it would to a managed PostgreSQL or a Temporal cluster that requires TLS.
export class TlsProxy {
  private readonly server: TcpServer;
  readonly address: string;
  // Connections refused for not starting with TLS.
  refused = 0;

  private constructor(server: TcpServer, address: string) {
    this.server = server;
    this.address = address;
  }

  // gRPC (Temporal): HTTP/2 by ALPN, and a client certificate signed by the test CA required (mutual TLS).
  static async grpc(target: string, certs: Certificates): Promise<TlsProxy> {
    const server = createTlsServer(
      {
        cert: await readFile(certs.server.cert),
        key: await readFile(certs.server.key),
        ca: await readFile(certs.ca),
        requestCert: true,
        rejectUnauthorized: true,
        ALPNProtocols: ['h2'],
      },
      (socket) => pipe(socket, target),
    );
    server.on('tlsClientError', () => undefined);
    return TlsProxy.listen(server);
  }

  // PostgreSQL's protocol asks for TLS inside the connection: the client's SSLRequest is answered 'S' and the
  // socket becomes TLS; a client that starts without it is cut off, as `hostnossl ... reject` does.
  static async postgres(target: string, certs: Certificates): Promise<TlsProxy> {
    const [cert, key] = [await readFile(certs.server.cert), await readFile(certs.server.key)];
    let proxy: TlsProxy | undefined;
    const server = createTcpServer((socket) => {
      socket.once('data', (first) => {
        const sslRequest = first.length === 8 && first.readInt32BE(0) === 8 && first.readInt32BE(4) === 80877103;
        if (!sslRequest) {
          proxy!.refused++;
          socket.destroy();
          return;
        }
        socket.write('S');
        const secure = new TLSSocket(socket, { isServer: true, cert, key });
        secure.on('error', () => socket.destroy());
        secure.once('secure', () => pipe(secure, target));
      });
      socket.on('error', () => undefined);
    });
    proxy = await TlsProxy.listen(server);
    return proxy;
  }

  private static async listen(server: TcpServer): Promise<TlsProxy> {
    const port = await freePort();
    await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', () => resolve()));
    return new TlsProxy(server, `127.0.0.1:${port}`);
  }

  close(): Promise<void> {
    return new Promise((resolve) => this.server.close(() => resolve()));
  }
}

function pipe(socket: Socket, target: string): void {
  const at = target.lastIndexOf(':');
  const upstream = connect(Number(target.slice(at + 1)), target.slice(0, at));
  socket.pipe(upstream).pipe(socket);
  const end = () => (socket.destroy(), upstream.destroy());
  socket.on('error', end);
  upstream.on('error', end);
  socket.on('close', end);
  upstream.on('close', end);
}
