import { useState } from 'preact/hooks';
import { api, unwrap, type Account as AccountView } from '../api.ts';
import { navigate } from '../router.tsx';
import { ErrorNote, useAction } from '../ui.tsx';

// The person's own account: their name, and deleting it (with their password, or for an account made
// through the identity provider their e-mail typed out, soon after signing in there).
export function Account({ account, onAccount }: { account: AccountView; onAccount: (account: AccountView | null) => void }) {
  const rename = useAction();
  const remove = useAction();
  const [withPassword, setWithPassword] = useState(true);
  return (
    <main class="narrow">
      <h1>Account</h1>
      <p class="muted">{account.user.email}</p>
      <form
        aria-label="Your name"
        onSubmit={async (event) => {
          event.preventDefault();
          const name = String(new FormData(event.currentTarget).get('name')).trim();
          await rename.run(async () => onAccount(await unwrap(await api.PATCH('/api/auth/me', { body: { name } }))));
        }}
      >
        <label>
          Name <input name="name" defaultValue={account.user.name} required autocomplete="name" />
        </label>
        <button type="submit" disabled={rename.busy}>
          Save
        </button>
        <ErrorNote error={rename.error} upgradeUrl={rename.upgradeUrl} />
      </form>
      <h2>Delete the account</h2>
      <p>
        Organizations where you are the only member are deleted with all their memories; from the others you are removed. If you are the
        only owner of an organization with other members, make one of them owner first.
      </p>
      <form
        aria-label="Delete the account"
        onSubmit={async (event) => {
          event.preventDefault();
          const proof = String(new FormData(event.currentTarget).get('proof'));
          await remove.run(async () => {
            if (!confirm('Delete your account for good?')) return;
            await unwrap(await api.DELETE('/api/auth/me', { body: withPassword ? { password: proof } : { confirm_email: proof } }));
            onAccount(null);
            navigate('/signin', true);
          });
        }}
      >
        {withPassword ? (
          <label>
            Your password <input name="proof" type="password" required autocomplete="current-password" />
          </label>
        ) : (
          <label>
            Your e-mail, typed out <input name="proof" type="email" required autocomplete="off" />
          </label>
        )}
        <button type="button" class="secondary" onClick={() => setWithPassword(!withPassword)}>
          {withPassword ? 'I signed up through the identity provider' : 'I have a password'}
        </button>
        <button type="submit" class="danger" disabled={remove.busy}>
          Delete my account
        </button>
        <ErrorNote error={remove.error} upgradeUrl={remove.upgradeUrl} />
      </form>
    </main>
  );
}
