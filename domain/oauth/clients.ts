import type { EntityManager } from '@mikro-orm/postgresql';
import { z } from 'zod';
import { newId } from '../ids.ts';
import { query, queryOne, sql, toDate } from '../sql.ts';
import { oauthError } from './errors.ts';
import { redirectUriProblem } from './redirect-uris.ts';

export interface OAuthClient {
  id: string;
  name: string;
  redirectUris: string[];
  createdAt: Date;
}

interface ClientRow {
  id: string;
  name: string;
  redirect_uris: string[];
  created_at: string | Date;
}

const view = (row: ClientRow): OAuthClient => ({
  id: row.id,
  name: row.name,
  redirectUris: row.redirect_uris,
  createdAt: toDate(row.created_at),
});

// Public clients only (no secret: PKCE proves who exchanges a code); unnamed, a client goes by its first redirect
// URI's host. A soft cap on the table: registrations racing each other may pass it by a few, and the ones nobody
// ever authorized are swept after a day.
export async function registerClient(
  em: EntityManager,
  input: { name: string | undefined; redirectUris: string[] },
  maxClients: number,
): Promise<OAuthClient> {
  for (const uri of input.redirectUris) {
    const problem = redirectUriProblem(uri);
    if (problem) throw oauthError('invalid_redirect_uri', `redirect URI ${uri} ${problem}`);
  }
  const name = input.name ?? new URL(input.redirectUris[0]!).host;
  const stored = (await queryOne(em, sql<{ n: number }>`select count(*)::int as n from oauth_clients`))!.n;
  if (stored >= maxClients) {
    throw oauthError(
      'temporarily_unavailable',
      'this server holds as many client registrations as it keeps; try again tomorrow',
      'unavailable',
    );
  }
  const rows = await query(
    em,
    sql<ClientRow>`insert into oauth_clients (id, name, redirect_uris, created_at)
      values (${newId()}, ${name}, ${input.redirectUris}::text[], now())
      returning id, name, redirect_uris, created_at`,
  );
  return view(rows[0]!);
}

// A client id is ours only when it is a UUID we issued; anything else is unknown, never a database error.
export async function findClient(em: EntityManager, clientId: string): Promise<OAuthClient | null> {
  if (!z.uuid().safeParse(clientId).success) return null;
  const row = await queryOne(em, sql<ClientRow>`select id, name, redirect_uris, created_at from oauth_clients where id = ${clientId}`);
  return row ? view(row) : null;
}
