import { useState } from 'preact/hooks';
import { api, unwrap, type Account } from '../api.ts';
import { Link, navigate } from '../router.tsx';
import { QuickStart } from '../quick-start.tsx';
import { ErrorNote, SecretOnce, useAction } from '../ui.tsx';

export function SignUp({ onSignedIn }: { onSignedIn: (account: Account) => void }) {
  const { busy, error, run } = useAction();
  // Sign-up answers with a first API token: shown once here, then gone with the page.
  const [created, setCreated] = useState<{ account: Account; token: string } | null>(null);
  if (created) {
    return (
      <main class="narrow">
        <h1>Welcome, {created.account.user.name}</h1>
        <p>Your organization {created.account.org.name} is ready. Agents reach it with this API token:</p>
        <SecretOnce label="Your first API token" value={created.token} />
        <QuickStart token={created.token} />
        <button
          type="button"
          onClick={() => {
            onSignedIn(created.account);
            navigate('/', true);
          }}
        >
          Continue to your memories
        </button>
      </main>
    );
  }
  return (
    <main class="narrow">
      <h1>Create an account</h1>
      <form
        onSubmit={async (event) => {
          event.preventDefault();
          const form = new FormData(event.currentTarget);
          await run(async () => {
            const body = {
              name: String(form.get('name')),
              email: String(form.get('email')),
              password: String(form.get('password')),
              org_name: String(form.get('org_name')),
            };
            const answer = await unwrap(await api.POST('/api/auth/signup', { body }));
            setCreated({ account: { user: answer.user, org: answer.org }, token: answer.api_token.raw });
          });
        }}
      >
        <label>
          Your name <input name="name" autocomplete="name" required />
        </label>
        <label>
          E-mail <input name="email" type="email" autocomplete="username" required />
        </label>
        <label>
          Password <input name="password" type="password" autocomplete="new-password" minLength={10} required />
        </label>
        <label>
          Organization <input name="org_name" required />
        </label>
        <ErrorNote error={error} />
        <button type="submit" disabled={busy}>
          {busy ? 'Creating…' : 'Create account'}
        </button>
      </form>
      <p>
        Already have an account? <Link to="/signin">Sign in</Link>
      </p>
    </main>
  );
}
