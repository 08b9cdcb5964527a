import { useEffect, useState } from 'preact/hooks';
import type { components } from '../../../clients/typescript/src/index.ts';
import { api, messageOf, unwrap } from '../api.ts';
import { Empty, ErrorNote, Loading, SecretOnce, useAction, when } from '../ui.tsx';

type Endpoint = components['schemas']['WebhookEndpoint'];
type Delivery = components['schemas']['WebhookDelivery'];
const EVENTS: Endpoint['events'] = ['memory.saved', 'memory.updated', 'memory.deleted'];
const POLL_MS = 2000;

const eventsOf = (form: FormData): Endpoint['events'] => EVENTS.filter((event) => form.get(event) === 'on');

// Webhook endpoints: the org's memory events, signed, sent to a URL. Admins and owners manage them.
export function Webhooks({ canManage }: { canManage: boolean }) {
  const [endpoints, setEndpoints] = useState<Endpoint[] | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [secret, setSecret] = useState<{ url: string; value: string } | null>(null);
  const create = useAction();
  const load = () =>
    api
      .GET('/api/webhooks')
      .then(unwrap)
      .then(
        (answer) => setEndpoints(answer.endpoints),
        (err: unknown) => setError(messageOf(err)),
      );
  useEffect(() => void load(), []);
  return (
    <main>
      <h1>Webhooks</h1>
      <p class="muted">
        Each delivery is signed (Standard Webhooks); failed ones are tried again with backoff, and can be sent again from here.
      </p>
      {canManage ? (
        <form
          class="add"
          aria-label="Add an endpoint"
          onSubmit={async (event) => {
            event.preventDefault();
            const formElement = event.currentTarget;
            const form = new FormData(formElement);
            await create.run(async () => {
              const body = {
                url: String(form.get('url')).trim(),
                events: eventsOf(form),
                description: String(form.get('description')).trim() || undefined,
              };
              const endpoint = await unwrap(await api.POST('/api/webhooks', { body }));
              setSecret({ url: endpoint.url, value: endpoint.secret });
              formElement.reset();
              await load();
            });
          }}
        >
          <label class="wide">
            URL <input name="url" type="url" required placeholder="https://example.com/hooks/memory" />
          </label>
          <EventChoices selected={EVENTS} />
          <label>
            Description <input name="description" maxLength={500} />
          </label>
          <button type="submit" disabled={create.busy}>
            Add endpoint
          </button>
          <ErrorNote error={create.error} upgradeUrl={create.upgradeUrl} />
        </form>
      ) : (
        <p class="muted">Your role lets you see endpoints and deliveries; admins and owners change them.</p>
      )}
      {secret ? <SecretOnce label={`Signing secret of ${secret.url}`} value={secret.value} /> : null}
      <ErrorNote error={error} />
      {endpoints === null && !error ? <Loading what="endpoints" /> : null}
      {endpoints?.length === 0 ? <Empty>No endpoints. Add one to hear about saved, updated and deleted memories.</Empty> : null}
      <ul class="memories">
        {endpoints?.map((endpoint) => (
          <EndpointItem key={endpoint.id} endpoint={endpoint} canManage={canManage} onChanged={load} />
        ))}
      </ul>
    </main>
  );
}

function EventChoices({ selected }: { selected: Endpoint['events'] }) {
  return (
    <fieldset>
      <legend>Events</legend>
      {EVENTS.map((event) => (
        <label key={event} class="check">
          <input type="checkbox" name={event} defaultChecked={selected.includes(event)} /> {event}
        </label>
      ))}
    </fieldset>
  );
}

function EndpointItem({ endpoint, canManage, onChanged }: { endpoint: Endpoint; canManage: boolean; onChanged: () => Promise<void> }) {
  const [editing, setEditing] = useState(false);
  const [open, setOpen] = useState(false);
  const action = useAction();
  const path = { params: { path: { id: endpoint.id } } };
  const patch = (body: { url?: string; events?: Endpoint['events']; description?: string; enabled?: boolean }) =>
    action.run(async () => {
      await unwrap(await api.PUT('/api/webhooks/{id}', { ...path, body }));
      setEditing(false);
      await onChanged();
    });
  return (
    <li>
      <h2>
        {endpoint.url} {endpoint.enabled ? null : <span class="tag">disabled</span>}
      </h2>
      {endpoint.description ? <p>{endpoint.description}</p> : null}
      <p class="meta">
        <span>{endpoint.events.join(', ')}</span>
        <span>last success {endpoint.last_success_at ? when(endpoint.last_success_at) : 'never'}</span>
        {endpoint.consecutive_failures ? <span>{endpoint.consecutive_failures} failures in a row</span> : null}
      </p>
      {editing ? (
        <form
          aria-label={`Edit ${endpoint.url}`}
          onSubmit={(event) => {
            event.preventDefault();
            const form = new FormData(event.currentTarget);
            void patch({
              url: String(form.get('url')).trim(),
              events: eventsOf(form),
              description: String(form.get('description')).trim(),
            });
          }}
        >
          <label class="wide">
            URL <input name="url" type="url" required defaultValue={endpoint.url} />
          </label>
          <EventChoices selected={endpoint.events} />
          <label>
            Description <input name="description" defaultValue={endpoint.description} maxLength={500} />
          </label>
          <button type="submit" disabled={action.busy}>
            Save
          </button>
          <button type="button" class="secondary" onClick={() => setEditing(false)}>
            Cancel
          </button>
        </form>
      ) : null}
      <div class="actions">
        <button type="button" class="secondary" aria-expanded={open} onClick={() => setOpen(!open)}>
          {open ? 'Hide deliveries' : 'Deliveries'}
        </button>
        {canManage && !editing ? (
          <>
            <button type="button" class="secondary" onClick={() => setEditing(true)}>
              Edit
            </button>
            <button type="button" class="secondary" onClick={() => void patch({ enabled: !endpoint.enabled })}>
              {endpoint.enabled ? 'Disable' : 'Enable'}
            </button>
            <button
              type="button"
              class="danger"
              onClick={() =>
                void action.run(async () => {
                  if (!confirm(`Remove the endpoint ${endpoint.url}?`)) return;
                  await unwrap(await api.DELETE('/api/webhooks/{id}', path));
                  await onChanged();
                })
              }
            >
              Remove
            </button>
          </>
        ) : null}
      </div>
      <ErrorNote error={action.error} upgradeUrl={action.upgradeUrl} />
      {open ? <Deliveries endpointId={endpoint.id} canManage={canManage} /> : null}
    </li>
  );
}

function Deliveries({ endpointId, canManage }: { endpointId: string; canManage: boolean }) {
  const [deliveries, setDeliveries] = useState<Delivery[] | null>(null);
  const [error, setError] = useState<string | null>(null);
  const retry = useAction();
  const load = () =>
    api
      .GET('/api/webhooks/{id}/deliveries', { params: { path: { id: endpointId }, query: { limit: 50 } } })
      .then(unwrap)
      .then(
        (answer) => setDeliveries(answer.deliveries),
        (err: unknown) => setError(messageOf(err)),
      );
  // Read again while the panel is open: new deliveries appear, and running ones finish.
  useEffect(() => {
    void load();
    const timer = setInterval(() => void load(), POLL_MS);
    return () => clearInterval(timer);
  }, [endpointId]);
  if (error) return <ErrorNote error={error} />;
  if (deliveries === null) return <Loading what="deliveries" />;
  if (deliveries.length === 0) return <Empty>No deliveries yet: they appear when memories are saved, updated or deleted.</Empty>;
  return (
    <section aria-label="Deliveries">
      <ErrorNote error={retry.error} upgradeUrl={retry.upgradeUrl} />
      <table>
        <thead>
          <tr>
            <th scope="col">Event</th>
            <th scope="col">Status</th>
            <th scope="col">Attempts</th>
            <th scope="col">Created</th>
            <th scope="col">
              <span class="visually-hidden">Actions</span>
            </th>
          </tr>
        </thead>
        <tbody>
          {deliveries.map((delivery) => (
            <tr key={delivery.id}>
              <td data-label="Event">{delivery.event_type}</td>
              <td data-label="Status">{delivery.status}</td>
              <td data-label="Attempts">
                {delivery.attempts.map((a) => `#${a.attempt} ${a.status_code ?? a.error ?? '…'} (${a.duration_ms} ms)`).join(', ') ||
                  'none yet'}
              </td>
              <td data-label="Created">{when(delivery.created_at)}</td>
              <td>
                {canManage && delivery.status !== 'pending' ? (
                  <button
                    type="button"
                    class="secondary"
                    aria-label={`Send ${delivery.event_type} again`}
                    disabled={retry.busy}
                    onClick={() =>
                      void retry.run(async () => {
                        await unwrap(
                          await api.POST('/api/webhooks/{id}/deliveries/{deliveryId}/retry', {
                            params: { path: { id: endpointId, deliveryId: delivery.id } },
                          }),
                        );
                        await load();
                      })
                    }
                  >
                    Send again
                  </button>
                ) : null}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </section>
  );
}
