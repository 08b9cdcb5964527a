import { useEffect, useState } from 'preact/hooks';
import { api, messageOf, unwrap } from '../api.ts';
import type { components } from '../../../clients/typescript/src/index.ts';
import { QuickStart } from '../quick-start.tsx';
import { Empty, ErrorNote, Loading, SecretOnce, useAction, when } from '../ui.tsx';

type Token = components['schemas']['ApiToken'];

export function Tokens() {
  const [tokens, setTokens] = useState<Token[] | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [issued, setIssued] = useState<{ name: string; raw: string } | null>(null);
  const create = useAction();
  const load = () =>
    api
      .GET('/api/auth/tokens')
      .then(unwrap)
      .then(setTokens, (err: unknown) => setError(messageOf(err)));
  useEffect(() => void load(), []);
  return (
    <main>
      <h1>API tokens</h1>
      <p class="muted">Agents and scripts use a token as `Authorization: Bearer svc_…`. It acts as you, in this organization.</p>
      <form
        class="add"
        aria-label="Create a token"
        onSubmit={async (event) => {
          event.preventDefault();
          const formElement = event.currentTarget;
          const name = String(new FormData(formElement).get('name')).trim();
          await create.run(async () => {
            const token = await unwrap(await api.POST('/api/auth/tokens', { body: { name: name || undefined } }));
            setIssued({ name: token.name ?? 'token', raw: token.raw });
            formElement.reset();
            await load();
          });
        }}
      >
        <label>
          Name <input name="name" placeholder="my agent" maxLength={200} />
        </label>
        <button type="submit" disabled={create.busy}>
          Create token
        </button>
        <ErrorNote error={create.error} upgradeUrl={create.upgradeUrl} />
      </form>
      {issued ? <SecretOnce label={`New token “${issued.name}”`} value={issued.raw} /> : null}
      {issued ? <QuickStart token={issued.raw} /> : null}
      <ErrorNote error={error} />
      {tokens === null && !error ? <Loading what="tokens" /> : null}
      {tokens?.length === 0 ? <Empty>No tokens. Create one for each agent, so you can revoke one without the others.</Empty> : null}
      {tokens?.length ? (
        <table>
          <caption class="visually-hidden">Live API tokens</caption>
          <thead>
            <tr>
              <th scope="col">Name</th>
              <th scope="col">Starts with</th>
              <th scope="col">Created</th>
              <th scope="col">Last used</th>
              <th scope="col">
                <span class="visually-hidden">Actions</span>
              </th>
            </tr>
          </thead>
          <tbody>
            {tokens.map((token) => (
              <tr key={token.id}>
                <td data-label="Name">{token.name ?? '(no name)'}</td>
                <td data-label="Starts with">
                  <code>{token.prefix}…</code>
                </td>
                <td data-label="Created">{when(token.created_at)}</td>
                <td data-label="Last used">{token.last_used_at ? when(token.last_used_at) : 'never'}</td>
                <td>
                  <button
                    type="button"
                    class="danger"
                    aria-label={`Revoke ${token.name ?? token.prefix}`}
                    onClick={async () => {
                      if (!confirm(`Revoke “${token.name ?? token.prefix}”? Agents using it stop working at once.`)) return;
                      try {
                        await unwrap(await api.DELETE('/api/auth/tokens/{id}', { params: { path: { id: token.id } } }));
                        if (issued) setIssued(null);
                        await load();
                      } catch (err) {
                        setError(messageOf(err));
                      }
                    }}
                  >
                    Revoke
                  </button>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      ) : null}
    </main>
  );
}
