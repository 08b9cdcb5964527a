import * as client from 'openid-client';
import type { Identity, PendingAuthorization } from '../domain/accounts/identity.ts';
import { AppError } from '../domain/errors.ts';

export interface OidcSettings {
  issuer: string;
  clientId: string;
  clientSecret: string;
  redirectUri: string;
}

// The relying party, through openid-client: discovery once, authorization code flow with state, nonce and
// PKCE (S256). Plain-http issuers are allowed only on loopback (the tests' provider).
export class OidcClient {
  readonly #settings: OidcSettings;
  #config: Promise<client.Configuration> | undefined;

  constructor(settings: OidcSettings) {
    this.#settings = settings;
  }

  #configuration(): Promise<client.Configuration> {
    const issuer = new URL(this.#settings.issuer);
    const loopback = issuer.protocol === 'http:' && ['127.0.0.1', 'localhost', '[::1]'].includes(issuer.hostname);
    this.#config ??= client
      .discovery(
        issuer,
        this.#settings.clientId,
        this.#settings.clientSecret,
        undefined,
        loopback ? { execute: [client.allowInsecureRequests] } : undefined,
      )
      .catch((err: unknown) => {
        this.#config = undefined;
        throw new AppError('unavailable', 'oauth_unavailable', `the identity provider could not be reached: ${String(err)}`);
      });
    return this.#config;
  }

  async start(): Promise<{ url: URL; state: string; pending: PendingAuthorization }> {
    const config = await this.#configuration();
    const state = client.randomState();
    const pending = { nonce: client.randomNonce(), codeVerifier: client.randomPKCECodeVerifier() };
    const url = client.buildAuthorizationUrl(config, {
      redirect_uri: this.#settings.redirectUri,
      scope: 'openid email profile',
      state,
      nonce: pending.nonce,
      code_challenge: await client.calculatePKCECodeChallenge(pending.codeVerifier),
      code_challenge_method: 'S256',
    });
    return { url, state, pending };
  }

  async finish(callbackUrl: URL, state: string, pending: PendingAuthorization): Promise<Identity> {
    const config = await this.#configuration();
    try {
      const tokens = await client.authorizationCodeGrant(config, callbackUrl, {
        pkceCodeVerifier: pending.codeVerifier,
        expectedState: state,
        expectedNonce: pending.nonce,
        idTokenExpected: true,
      });
      const idClaims = tokens.claims();
      if (!idClaims) throw new Error('no ID token');
      // Many providers put e-mail and profile claims only in the userinfo response.
      const claims =
        typeof idClaims.email === 'string'
          ? idClaims
          : { ...(await client.fetchUserInfo(config, tokens.access_token, idClaims.sub)), sub: idClaims.sub };
      return {
        issuer: config.serverMetadata().issuer,
        subject: idClaims.sub,
        email: typeof claims.email === 'string' ? claims.email : null,
        emailVerified: claims.email_verified === true,
        name: typeof claims.name === 'string' ? claims.name : null,
      };
    } catch (err) {
      throw new AppError(
        'invalid',
        'oauth_failed',
        `the identity provider refused the sign-in: ${err instanceof Error ? err.message : String(err)}`,
      );
    }
  }
}
