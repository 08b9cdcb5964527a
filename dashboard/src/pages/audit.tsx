import { useEffect, useState } from 'preact/hooks';
import type { components } from '../../../clients/typescript/src/index.ts';
import { api, messageOf, unwrap } from '../api.ts';
import { Empty, ErrorNote, Loading, Pager, when } from '../ui.tsx';

type AuditEvent = components['schemas']['AuditEvent'];
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
    const instant = (day: string, endOfDay: boolean) => (day ? new Date(`${day}T${endOfDay ? '23:59:59.999' : '00:00:00'}`).getTime() : undefined);
    const query = {
      action: filters.action || undefined,
      target: filters.target || undefined,
      since: instant(filters.since, false),
      until: instant(filters.until, true),
      limit: PAGE,
      offset,
    };
    api.GET('/api/events', { params: { query } }).then(unwrap).then((answer) => setEvents(answer.events), (err: unknown) => setError(messageOf(err)));
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
          setFilters({ action: String(form.get('action')).trim(), target: String(form.get('target')).trim(), since: String(form.get('since')), until: String(form.get('until')) });
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
                <td data-label="Action">{event.action}</td>
                <td data-label="Target">
                  <code>{event.target_id ?? '—'}</code>
                </td>
                <td data-label="By">
                  <code>{event.actor_user_id ?? 'the service'}</code>
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
