import Provider from 'oidc-provider';
import type { Server } from 'node:http';

export interface TestAccount {
  email: string;
  email_verified: boolean;
  name: string;
}

// A real OpenID Connect provider (node-oidc-provider) on loopback, with its development login and consent
// pages, one confidential client, and accounts the test defines.
export async function startOidcProvider(
  port: number,
  redirectUri: string,
): Promise<{ issuer: string; accounts: Map<string, TestAccount>; close: () => Promise<void> }> {
  const issuer = `http://127.0.0.1:${port}`;
  const accounts = new Map<string, TestAccount>();
  const provider = new Provider(issuer, {
    clients: [
      {
        client_id: 'memory-service',
        client_secret: 'memory-service-secret',
        redirect_uris: [redirectUri],
        grant_types: ['authorization_code'],
        response_types: ['code'],
      },
    ],
    findAccount: async (_ctx: unknown, id: string) => {
      const account = accounts.get(id);
      return account ? { accountId: id, claims: async () => ({ sub: id, ...account }) } : undefined;
    },
    claims: { openid: ['sub'], email: ['email', 'email_verified'], profile: ['name'] },
    cookies: { keys: ['oidc-test-cookie-key'] },
    features: { devInteractions: { enabled: true } },
  });
  const server: Server = await new Promise((resolve) => {
    const s = provider.listen(port, () => resolve(s as unknown as Server));
  });
  return { issuer, accounts, close: () => new Promise((resolve) => server.close(() => resolve())) };
}
