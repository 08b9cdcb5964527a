import { Client, Connection } from '@temporalio/client';

// Lazy: the API starts and serves reads while Temporal is still coming up; /readyz tells the difference.
export function connectClient(address: string, namespace: string): Client {
  return new Client({ connection: Connection.lazy({ address }), namespace });
}
