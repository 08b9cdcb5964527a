import { useEffect, useState } from 'preact/hooks';
import { api, unwrap, type Account } from '../api.ts';
import { Link, navigate } from '../router.tsx';
import { ErrorNote, useAction } from '../ui.tsx';

export function SignIn({ onSignedIn }: { onSignedIn: (account: Account) => void }) {
  const { busy, error, run } = useAction();
  const [identityProvider, setIdentityProvider] = useState(false);
  // Back to the OAuth authorization that sent the person here (its consent page); no other place, so a link cannot send them elsewhere.
  const requested = new URLSearchParams(location.search).get('next');
  const next = requested?.startsWith('/oauth/authorize?') ? requested : null;
  useEffect(() => {
    api.GET('/api/auth/methods').then(
      ({ data }) => setIdentityProvider(data?.identity_provider ?? false),
      () => undefined,
    );
  }, []);
  return (
    <main class="narrow">
      <h1>Sign in</h1>
      <form
        onSubmit={async (event) => {
          event.preventDefault();
          const form = new FormData(event.currentTarget);
          await run(async () => {
            onSignedIn(
              await unwrap(
                await api.POST('/api/auth/login', { body: { email: String(form.get('email')), password: String(form.get('password')) } }),
              ),
            );
            if (next) location.assign(next);
            else navigate('/', true);
          });
        }}
      >
        <label>
          E-mail <input name="email" type="email" autocomplete="username" required />
        </label>
        <label>
          Password <input name="password" type="password" autocomplete="current-password" required />
        </label>
        <ErrorNote error={error} />
        <button type="submit" disabled={busy}>
          {busy ? 'Signing in…' : 'Sign in'}
        </button>
      </form>
      {identityProvider ? (
        <p>
          {/* A full page load: the provider's pages come next, and it sends the browser back to the API. */}
          <a class="button secondary" href={`/api/auth/oauth/idp/start${next ? `?next=${encodeURIComponent(next)}` : ''}`}>
            Sign in with your identity provider
          </a>
        </p>
      ) : null}
      <p>
        <Link to="/reset-password">Forgot your password?</Link>
      </p>
      <p>
        No account yet? <Link to="/signup">Sign up</Link>
      </p>
    </main>
  );
}
