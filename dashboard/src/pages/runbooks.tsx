import { useEffect, useState } from 'preact/hooks';
import type { components } from '../../../clients/typescript/src/index.ts';
import { api, messageOf, unwrap } from '../api.ts';
import { Empty, ErrorNote, FindForm, Loading, Pager, useAction, when } from '../ui.tsx';

type Runbook = components['schemas']['Runbook'];
const PAGE = 50;

// Runbooks: procedures agents follow, ranked in recall by how often they worked.
export function Runbooks() {
  const [q, setQ] = useState('');
  const [offset, setOffset] = useState(0);
  const [runbooks, setRunbooks] = useState<Runbook[] | null>(null);
  const [error, setError] = useState<string | null>(null);
  const create = useAction();
  const load = () =>
    api
      .GET('/api/procedural', { params: { query: { ...(q ? { q } : {}), limit: PAGE, offset } } })
      .then(unwrap)
      .then(
        (answer) => setRunbooks(answer.procedurals),
        (err: unknown) => setError(messageOf(err)),
      );
  useEffect(() => void load(), [q, offset]);
  return (
    <main>
      <h1>Runbooks</h1>
      <form
        class="add"
        aria-label="Add a runbook"
        onSubmit={async (event) => {
          event.preventDefault();
          const formElement = event.currentTarget;
          const form = new FormData(formElement);
          const list = (name: string, separator: string | RegExp) =>
            String(form.get(name))
              .split(separator)
              .map((s) => s.trim())
              .filter(Boolean);
          await create.run(async () => {
            const body = {
              title: String(form.get('title')).trim(),
              summary: String(form.get('summary')).trim(),
              trigger_phrases: list('triggers', ','),
              steps: list('steps', /\n/).map((description) => ({ description })),
            };
            await unwrap(await api.POST('/api/procedural', { body }));
            formElement.reset();
            await load();
          });
        }}
      >
        <label>
          Title <input name="title" required maxLength={500} />
        </label>
        <label class="wide">
          Summary <input name="summary" />
        </label>
        <label>
          Trigger phrases <input name="triggers" placeholder="deploy failed, rollback" />
        </label>
        <label class="wide">
          Steps, one per line <textarea name="steps" rows={3} />
        </label>
        <button type="submit" disabled={create.busy}>
          Add runbook
        </button>
        <ErrorNote error={create.error} upgradeUrl={create.upgradeUrl} />
      </form>
      <FindForm
        label="Find runbooks"
        placeholder="words of the title or summary"
        onFind={(words) => {
          setOffset(0);
          setQ(words);
        }}
      />
      <ErrorNote error={error} />
      {runbooks === null && !error ? <Loading what="runbooks" /> : null}
      {runbooks?.length === 0 ? <Empty>{q ? 'No runbook matches.' : 'No runbooks yet. Agents add them, or add one above.'}</Empty> : null}
      <ul class="memories">
        {runbooks?.map((runbook) => (
          <RunbookItem key={runbook.id} initial={runbook} onDeleted={load} />
        ))}
      </ul>
      <Pager offset={offset} page={PAGE} shown={runbooks?.length ?? 0} onOffset={setOffset} />
    </main>
  );
}

function RunbookItem({ initial, onDeleted }: { initial: Runbook; onDeleted: () => Promise<void> }) {
  const [runbook, setRunbook] = useState(initial);
  const action = useAction();
  const path = { params: { path: { id: runbook.id } } };
  const outcome = (value: 'success' | 'failure') =>
    action.run(async () => setRunbook(await unwrap(await api.POST('/api/procedural/{id}', { ...path, body: { outcome: value } }))));
  return (
    <li aria-label={runbook.title}>
      <h2>{runbook.title}</h2>
      {runbook.summary ? <p>{runbook.summary}</p> : null}
      <p class="meta">
        {runbook.trigger_phrases.map((t) => (
          <span class="tag" key={t}>
            {t}
          </span>
        ))}
        <span>
          worked {runbook.success_count}, failed {runbook.failure_count}
        </span>
        <span>last used {runbook.last_used_at ? when(runbook.last_used_at) : 'never'}</span>
      </p>
      {runbook.steps.length ? (
        <ol>
          {runbook.steps.map((step, i) => (
            <li key={i}>
              {step.description}
              {step.command ? (
                <>
                  {' '}
                  <code>{step.command}</code>
                </>
              ) : null}
            </li>
          ))}
        </ol>
      ) : null}
      <div class="actions">
        <button type="button" class="secondary" disabled={action.busy} onClick={() => void outcome('success')}>
          It worked
        </button>
        <button type="button" class="secondary" disabled={action.busy} onClick={() => void outcome('failure')}>
          It failed
        </button>
        <button
          type="button"
          class="danger"
          disabled={action.busy}
          onClick={() =>
            void action.run(async () => {
              if (!confirm(`Delete the runbook “${runbook.title}”?`)) return;
              await unwrap(await api.DELETE('/api/procedural/{id}', path));
              await onDeleted();
            })
          }
        >
          Delete
        </button>
      </div>
      <ErrorNote error={action.error} upgradeUrl={action.upgradeUrl} />
    </li>
  );
}
