import { useEffect, useState } from 'preact/hooks';
import type { components } from '../../../clients/typescript/src/index.ts';
import { api, messageOf, unwrap, type Account } from '../api.ts';
import { Empty, ErrorNote, Loading, useAction, when } from '../ui.tsx';

type Org = components['schemas']['Organization'];
type Member = components['schemas']['Member'];
const ROLES: Member['role'][] = ['member', 'admin', 'owner'];

// The organization: its name, its members and their roles (owners change them, add and remove members), and the person's other
// organizations to switch to.
export function Organization({ account, onAccount }: { account: Account; onAccount: (account: Account) => void }) {
  const org = account.org;
  const isOwner = org.role === 'owner';
  const [members, setMembers] = useState<Member[] | null>(null);
  const [orgs, setOrgs] = useState<Org[]>([]);
  const [error, setError] = useState<string | null>(null);
  const rename = useAction();
  const add = useAction();
  const change = useAction();
  const path = { params: { path: { id: org.id } } };
  const load = () =>
    Promise.all([api.GET('/api/orgs/{id}/members', path).then(unwrap), api.GET('/api/orgs').then(unwrap)]).then(
      ([m, o]) => {
        setMembers(m.members);
        setOrgs(o.orgs);
      },
      (err: unknown) => setError(messageOf(err)),
    );
  useEffect(() => void load(), [org.id]);

  return (
    <main>
      <h1>Organization</h1>
      <form
        class="add"
        aria-label="Organization name"
        onSubmit={async (event) => {
          event.preventDefault();
          const form = new FormData(event.currentTarget);
          await rename.run(async () => {
            const updated = await unwrap(
              await api.PATCH('/api/orgs/{id}', {
                ...path,
                body: { name: String(form.get('name')).trim(), slug: String(form.get('slug')).trim() },
              }),
            );
            onAccount({ ...account, org: updated });
          });
        }}
      >
        <label>
          Name <input name="name" defaultValue={org.name} required disabled={!isOwner} />
        </label>
        <label>
          Slug <input name="slug" defaultValue={org.slug} pattern="[a-z0-9-]+" required disabled={!isOwner} />
        </label>
        {isOwner ? (
          <button type="submit" disabled={rename.busy}>
            Save
          </button>
        ) : (
          <p class="muted">Only owners rename the organization or manage its members.</p>
        )}
        <ErrorNote error={rename.error} upgradeUrl={rename.upgradeUrl} />
      </form>

      <h2>Members</h2>
      <ErrorNote error={error ?? change.error} />
      {members === null && !error ? <Loading what="members" /> : null}
      {members?.length === 0 ? <Empty>No members.</Empty> : null}
      {members?.length ? (
        <table>
          <caption class="visually-hidden">Members</caption>
          <thead>
            <tr>
              <th scope="col">Name</th>
              <th scope="col">E-mail</th>
              <th scope="col">Role</th>
              <th scope="col">Last sign-in</th>
              <th scope="col">
                <span class="visually-hidden">Actions</span>
              </th>
            </tr>
          </thead>
          <tbody>
            {members.map((member) => (
              <tr key={member.id}>
                <td data-label="Name">{member.name}</td>
                <td data-label="E-mail">{member.email}</td>
                <td data-label="Role">
                  {isOwner ? (
                    <select
                      aria-label={`Role of ${member.email}`}
                      value={member.role}
                      disabled={change.busy}
                      onChange={(event) => {
                        const select = event.currentTarget;
                        const role = select.value as Member['role'];
                        select.value = member.role; // the list shows the role the API answers, not the wish
                        void change.run(async () => {
                          if (
                            member.id === account.user.id &&
                            !confirm(`Give up the owner role in ${org.name}? Only another owner can give it back.`)
                          )
                            return;
                          await unwrap(
                            await api.PATCH('/api/orgs/{id}/members/{userId}', {
                              params: { path: { id: org.id, userId: member.id } },
                              body: { role },
                            }),
                          );
                          // Stepping down changes what this page may do: the account's role comes from the API again.
                          if (member.id === account.user.id) onAccount(await unwrap(await api.GET('/api/auth/me')));
                          await load();
                        });
                      }}
                    >
                      {ROLES.map((role) => (
                        <option value={role}>{role}</option>
                      ))}
                    </select>
                  ) : (
                    member.role
                  )}
                </td>
                <td data-label="Last sign-in">{member.last_login_at ? when(member.last_login_at) : 'never'}</td>
                <td>
                  {isOwner && member.id !== account.user.id ? (
                    <button
                      type="button"
                      class="danger"
                      aria-label={`Remove ${member.email}`}
                      disabled={change.busy}
                      onClick={() =>
                        void change.run(async () => {
                          if (!confirm(`Remove ${member.email} from ${org.name}?`)) return;
                          await unwrap(
                            await api.DELETE('/api/orgs/{id}/members/{userId}', { params: { path: { id: org.id, userId: member.id } } }),
                          );
                          await load();
                        })
                      }
                    >
                      Remove
                    </button>
                  ) : null}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      ) : null}
      {isOwner ? (
        <form
          class="add"
          aria-label="Add a member"
          onSubmit={async (event) => {
            event.preventDefault();
            const formElement = event.currentTarget;
            const form = new FormData(formElement);
            await add.run(async () => {
              await unwrap(
                await api.POST('/api/orgs/{id}/members', {
                  ...path,
                  body: { email: String(form.get('email')).trim(), role: form.get('role') as Member['role'] },
                }),
              );
              formElement.reset();
              await load();
            });
          }}
        >
          <label>
            E-mail of an existing account <input name="email" type="email" required />
          </label>
          <label>
            Role
            <select name="role" defaultValue="member">
              {ROLES.map((role) => (
                <option value={role}>{role}</option>
              ))}
            </select>
          </label>
          <button type="submit" disabled={add.busy}>
            Add member
          </button>
          <ErrorNote error={add.error} upgradeUrl={add.upgradeUrl} />
        </form>
      ) : null}

      {orgs.length > 1 ? (
        <>
          <h2>Your organizations</h2>
          <ul class="memories">
            {orgs.map((other) => (
              <li key={other.id}>
                <strong>{other.name}</strong> <span class="muted">({other.role})</span>{' '}
                {other.id === org.id ? (
                  <span class="tag">current</span>
                ) : (
                  <button
                    type="button"
                    class="secondary"
                    onClick={() =>
                      void change.run(async () =>
                        onAccount(await unwrap(await api.POST('/api/auth/switch-org', { body: { org_id: other.id } }))),
                      )
                    }
                  >
                    Switch to {other.name}
                  </button>
                )}
              </li>
            ))}
          </ul>
        </>
      ) : null}
    </main>
  );
}
