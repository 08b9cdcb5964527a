import { execFile } from 'node:child_process';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

export interface Certificates {
  ca: string;
  server: { cert: string; key: string };
  client: { cert: string; key: string };
}

// A certificate authority of the test's own, with a server certificate for localhost and 127.0.0.1 and a client
// certificate (for mutual TLS), made by openssl into `dir`: file paths, as services are configured with.
export async function makeCertificates(dir: string, name = 'memsvc-test'): Promise<Certificates> {
  const path = (file: string) => join(dir, file);
  const ec = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes'];
  await run('openssl', ['req', '-x509', ...ec, '-keyout', path('ca.key'), '-out', path('ca.pem'), '-days', '2', '-subj', `/CN=${name} CA`]);
  for (const [who, usage] of [
    ['server', 'serverAuth'],
    ['client', 'clientAuth'],
  ] as const) {
    await run('openssl', [
      'req',
      ...ec,
      '-keyout',
      path(`${who}.key`),
      '-out',
      path(`${who}.csr`),
      '-subj',
      `/CN=${who === 'server' ? 'localhost' : `${name} client`}`,
    ]);
    await writeFile(
      path(`${who}.ext`),
      `${who === 'server' ? 'subjectAltName=DNS:localhost,IP:127.0.0.1\n' : ''}extendedKeyUsage=${usage}\n`,
    );
    await run('openssl', [
      'x509',
      '-req',
      '-in',
      path(`${who}.csr`),
      '-CA',
      path('ca.pem'),
      '-CAkey',
      path('ca.key'),
      '-CAcreateserial',
      '-out',
      path(`${who}.pem`),
      '-days',
      '2',
      '-extfile',
      path(`${who}.ext`),
    ]);
  }
  return {
    ca: path('ca.pem'),
    server: { cert: path('server.pem'), key: path('server.key') },
    client: { cert: path('client.pem'), key: path('client.key') },
  };
}
