import { useEffect, useState } from 'preact/hooks';
import { api, messageOf, unwrap } from '../api.ts';
import { usePath } from '../router.tsx';
import { PAID_UNLOCKS } from '../paid.tsx';
import { ErrorNote, Loading, useAction } from '../ui.tsx';

type Billing = {
  plan: string;
  memories_created: number;
  memory_limit: number | null;
  storage_bytes: number;
  storage_limit_bytes: number | null;
  billing_configured: boolean;
};

const megabytes = (bytes: number): string => `${(bytes / 1024 / 1024).toFixed(1)} MB`;

function Meter({ label, used, limit, show }: { label: string; used: number; limit: number | null; show: (n: number) => string }) {
  return (
    <div class="meter">
      <p>
        {label}: {show(used)} {limit === null ? '(no limit on this plan)' : `of ${show(limit)}`}
      </p>
      {limit === null ? null : <progress max={limit} value={Math.min(used, limit)} aria-label={label} />}
    </div>
  );
}

// The plan, what the organization used of it, and the payment processor's pages (owners).
export function BillingPage({ isOwner }: { isOwner: boolean }) {
  const { query } = usePath();
  const [billing, setBilling] = useState<Billing | null>(null);
  const [error, setError] = useState<string | null>(null);
  const go = useAction();
  useEffect(() => {
    api
      .GET('/api/billing')
      .then(unwrap)
      .then(setBilling, (err: unknown) => setError(messageOf(err)));
  }, []);
  const hosted = (path: '/api/billing/checkout' | '/api/billing/portal') =>
    go.run(async () => {
      location.assign((await unwrap(await api.POST(path))).url);
    });
  return (
    <main class="narrow">
      <h1>Billing</h1>
      {query.get('checkout') === 'success' ? <p role="status">Thank you: the plan changes as soon as the payment is confirmed.</p> : null}
      {query.get('checkout') === 'cancelled' ? <p role="status">The checkout was cancelled; nothing changed.</p> : null}
      <ErrorNote error={error} />
      {billing === null && !error ? <Loading what="the plan" /> : null}
      {billing ? (
        <>
          <p>
            Plan: <strong>{billing.plan}</strong>
          </p>
          <Meter label="Memories created" used={billing.memories_created} limit={billing.memory_limit} show={(n) => n.toLocaleString()} />
          <Meter label="Storage" used={billing.storage_bytes} limit={billing.storage_limit_bytes} show={megabytes} />
          {billing.plan === 'free' ? (
            <section aria-label="What the paid plan unlocks">
              <h2>What the paid plan unlocks</h2>
              <ul>
                {PAID_UNLOCKS.map((unlock) => (
                  <li key={unlock}>{unlock}</li>
                ))}
              </ul>
            </section>
          ) : null}
          {!billing.billing_configured ? <p class="muted">Payments are not set up on this service.</p> : null}
          {billing.billing_configured && isOwner ? (
            <div class="actions">
              {billing.plan === 'free' ? (
                <button type="button" disabled={go.busy} onClick={() => void hosted('/api/billing/checkout')}>
                  Upgrade
                </button>
              ) : (
                <button type="button" class="secondary" disabled={go.busy} onClick={() => void hosted('/api/billing/portal')}>
                  Manage the subscription
                </button>
              )}
            </div>
          ) : null}
          {billing.billing_configured && !isOwner ? <p class="muted">Owners change the plan.</p> : null}
          <ErrorNote error={go.error} upgradeUrl={go.upgradeUrl} />
        </>
      ) : null}
    </main>
  );
}
