import { api, unwrap, type Account } from '../api.ts';
import { Link, navigate } from '../router.tsx';
import { ErrorNote, useAction } from '../ui.tsx';

export function SignIn({ onSignedIn }: { onSignedIn: (account: Account) => void }) {
  const { busy, error, run } = useAction();
  return (
    <main class="narrow">
      <h1>Sign in</h1>
      <form
        onSubmit={async (event) => {
          event.preventDefault();
          const form = new FormData(event.currentTarget);
          await run(async () => {
            onSignedIn(await unwrap(await api.POST('/api/auth/login', { body: { email: String(form.get('email')), password: String(form.get('password')) } })));
            navigate('/', true);
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
      <p>
        No account yet? <Link to="/signup">Sign up</Link>
      </p>
    </main>
  );
}
