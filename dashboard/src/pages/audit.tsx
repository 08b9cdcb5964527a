import { Fragment } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import type { components } from '../../../clients/typescript/src/index.ts';
import { api, messageOf, unwrap } from '../api.ts';
import { Link } from '../router.tsx';
import { Empty, ErrorNote, Loading, Pager, when } from '../ui.tsx';

type AuditEvent = components['schemas']['AuditEvent'];
type Target = NonNullable<AuditEvent['target']>;
const PAGE = 50;
interface Filters {
  action: string;
  target: string;
  since: string;
  until: string;
}

// Who did what in the organization, newest first, with the filters of GET /api/events.
export function Audit() {
  const [filters, setFilters] = useState<Filters>({ action: '', target: '', since: '', until: '' });
  const [offset, setOffset] = useState(0);
  const [events, setEvents] = useState<AuditEvent[] | null>(null);
  const [error, setError] = useState<string | null>(null);
  useEffect(() => {
    setError(null);
    const instant = (day: string, endOfDay: boolean) =>
      day ? new Date(`${day}T${endOfDay ? '23:59:59.999' : '00:00:00'}`).getTime() : undefined;
    const query = {
      action: filters.action || undefined,
      target: filters.target || undefined,
      since: instant(filters.since, false),
      until: instant(filters.until, true),
      limit: PAGE,
      offset,
    };
    api
      .GET('/api/events', { params: { query } })
      .then(unwrap)
      .then(
        (answer) => setEvents(answer.events),
        (err: unknown) => setError(messageOf(err)),
      );
  }, [filters, offset]);
  return (
    <main>
      <h1>Audit log</h1>
      <form
        class="filters"
        aria-label="Filters"
        onSubmit={(event) => {
          event.preventDefault();
          const form = new FormData(event.currentTarget);
          setOffset(0);
          setFilters({
            action: String(form.get('action')).trim(),
            target: String(form.get('target')).trim(),
            since: String(form.get('since')),
            until: String(form.get('until')),
          });
        }}
      >
        <label>
          Action starts with <input name="action" placeholder="memory." />
        </label>
        <label>
          Target id <input name="target" />
        </label>
        <label>
          From <input name="since" type="date" />
        </label>
        <label>
          Until <input name="until" type="date" />
        </label>
        <button type="submit">Apply</button>
      </form>
      <ErrorNote error={error} />
      {events === null && !error ? <Loading what="the audit log" /> : null}
      {events?.length === 0 ? <Empty>{offset ? 'No more events.' : 'Nothing recorded matches these filters.'}</Empty> : null}
      {events?.length ? (
        <table>
          <caption class="visually-hidden">Audit events, newest first</caption>
          <thead>
            <tr>
              <th scope="col">When</th>
              <th scope="col">Action</th>
              <th scope="col">Target</th>
              <th scope="col">By</th>
            </tr>
          </thead>
          <tbody>
            {events.map((event) => (
              <tr key={event.id}>
                <td data-label="When">{when(event.created_at)}</td>
                <td data-label="Action">
                  <Breakable action={event.action} />
                </td>
                <td data-label="Target">{event.target ? <TargetName target={event.target} /> : '—'}</td>
                <td data-label="By">
                  <Actor event={event} />
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      ) : null}
      <Pager offset={offset} page={PAGE} shown={events?.length ?? 0} onOffset={setOffset} />
    </main>
  );
}

// What each kind of target is called, and where the dashboard shows it (`to` given its label: a project's memories).
const KINDS: Record<Target['kind'], { name: string; to?: (target: Target) => string }> = {
  memory: { name: 'Memory', to: (t) => `/memories/${t.id}` },
  project: { name: 'Project', to: (t) => `/?namespace=${encodeURIComponent(t.label ?? '')}` },
  member: { name: 'Member', to: () => '/organization' },
  organization: { name: 'Organization', to: () => '/organization' },
  token: { name: 'API token', to: () => '/tokens' },
  runbook: { name: 'Runbook', to: () => '/runbooks' },
  chat_session: { name: 'Chat', to: () => '/chat' },
  entity: { name: 'Entity', to: () => '/entities' },
  webhook: { name: 'Webhook', to: () => '/webhooks' },
  export: { name: 'Export', to: () => '/exports' },
  deletion: { name: 'Deletion of memories' },
  proposal: { name: 'Consolidation proposal', to: () => '/consolidation' },
  billing_event: { name: 'Billing event', to: () => '/billing' },
  other: { name: 'Object' },
};

// The target by name, linked to its page while the org has it; one that is gone says so. The id is in the title.
function TargetName({ target }: { target: Target }) {
  const kind = KINDS[target.kind];
  const to = target.exists && kind.to ? kind.to(target) : null;
  const gone =
    target.exists || target.kind === 'other' ? null : (
      <span class="muted">{target.kind === 'member' ? ' (no longer a member)' : ' (since deleted)'}</span>
    );
  if (target.label === null) {
    return (
      <span title={target.id}>
        {to ? <Link to={to}>{kind.name}</Link> : kind.name}
        {gone}
      </span>
    );
  }
  return (
    <span title={target.id}>
      <span class="muted">{kind.name}</span> {to ? <Link to={to}>{target.label}</Link> : target.label}
      {gone}
    </span>
  );
}

// Who acted, by name, and with what: an API token by its name, or a session of the dashboard.
function Actor({ event }: { event: AuditEvent }) {
  const who = event.actor ? (
    <Link to="/organization">{event.actor.name}</Link>
  ) : event.actor_user_id ? (
    <span class="muted">a former member</span>
  ) : (
    'the service'
  );
  const how = event.token ? (
    event.token.kind === 'session' ? (
      <span class="muted"> in the dashboard</span>
    ) : (
      <>
        {' '}
        <span class="muted">with the API token</span> <Link to="/tokens">{event.token.name ?? 'unnamed'}</Link>
      </>
    )
  ) : event.actor_token ? (
    <span class="muted"> with a token since deleted</span>
  ) : null;
  return (
    <span title={event.actor?.email}>
      {who}
      {how}
    </span>
  );
}

// An action such as `memory.export`, which a narrow column breaks after a dot rather than inside a word.
function Breakable({ action }: { action: string }) {
  return (
    <>
      {action.split('.').map((part, i, parts) => (
        <Fragment key={i}>
          {part}
          {i < parts.length - 1 ? (
            <>
              .<wbr />
            </>
          ) : null}
        </Fragment>
      ))}
    </>
  );
}
