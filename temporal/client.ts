import { Client, Connection } from '@temporalio/client';
import { dataConverter } from './data-converter.ts';
import type { CodecKey } from './payload-codec.ts';

// Lazy: the API starts and serves reads while Temporal is still coming up; /readyz tells the difference.
export function connectClient(address: string, namespace: string, codecKeys: CodecKey[]): Client {
  return new Client({ connection: Connection.lazy({ address }), namespace, dataConverter: dataConverter(codecKeys) });
}
