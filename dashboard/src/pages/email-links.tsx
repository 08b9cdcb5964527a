// The pages the service's mails link to: confirming an e-mail address, and choosing a new password.
import { useEffect, useState } from 'preact/hooks';
import { api, messageOf, unwrap } from '../api.ts';
import { Link, usePath } from '../router.tsx';
import { ErrorNote, Loading, useAction } from '../ui.tsx';

export function VerifyEmail() {
  const token = usePath().query.get('token') ?? '';
  const [state, setState] = useState<'checking' | 'verified' | { error: string }>('checking');
  useEffect(() => {
    api
      .POST('/api/auth/verify-email', { body: { token } })
      .then(unwrap)
      .then(
        () => setState('verified'),
        (err: unknown) => setState({ error: messageOf(err) }),
      );
  }, [token]);
  return (
    <main class="narrow">
      <h1>Confirm your e-mail address</h1>
      {state === 'checking' ? <Loading what="the link" /> : null}
      {state === 'verified' ? <p role="status">Your e-mail address is confirmed.</p> : null}
      {typeof state === 'object' ? <ErrorNote error={`${state.error}. Ask for a new link from the dashboard once signed in.`} /> : null}
      <p>
        <Link to="/">Go to the dashboard</Link>
      </p>
    </main>
  );
}

export function ResetPassword() {
  const token = usePath().query.get('token');
  const action = useAction();
  const [done, setDone] = useState<string | null>(null);
  if (done) {
    return (
      <main class="narrow">
        <h1>{token ? 'Password changed' : 'Check your mail'}</h1>
        <p role="status">{done}</p>
        <p>
          <Link to="/signin">Sign in</Link>
        </p>
      </main>
    );
  }
  return (
    <main class="narrow">
      <h1>{token ? 'Choose a new password' : 'Reset your password'}</h1>
      <form
        onSubmit={async (event) => {
          event.preventDefault();
          const form = new FormData(event.currentTarget);
          await action.run(async () => {
            if (token) {
              const answer = await unwrap(
                await api.POST('/api/auth/reset-consume', { body: { token, password: String(form.get('password')) } }),
              );
              setDone(
                `Your password is changed. ${answer.sessions_ended} signed-in ${answer.sessions_ended === 1 ? 'session was' : 'sessions were'} ended; API tokens keep working.`,
              );
            } else {
              await unwrap(await api.POST('/api/auth/reset-request', { body: { email: String(form.get('email')).trim() } }));
              setDone(
                'If an account uses this address, a mail with a link to choose a new password is on its way. The link works once, for an hour.',
              );
            }
          });
        }}
      >
        {token ? (
          <label>
            New password <input name="password" type="password" autocomplete="new-password" minLength={10} required />
          </label>
        ) : (
          <label>
            E-mail <input name="email" type="email" autocomplete="username" required />
          </label>
        )}
        <ErrorNote error={action.error} upgradeUrl={action.upgradeUrl} />
        <button type="submit" disabled={action.busy}>
          {token ? 'Change the password' : 'Send the link'}
        </button>
      </form>
    </main>
  );
}
