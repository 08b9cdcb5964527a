import { useEffect, useState } from 'preact/hooks';
import type { components } from '../../../clients/typescript/src/index.ts';
import { api, messageOf, unwrap } from '../api.ts';
import { Link } from '../router.tsx';
import { Empty, ErrorNote, FindForm, Loading, Pager, useAction } from '../ui.tsx';

type Entity = components['schemas']['Entity'];
const PAGE = 50;

// The people, projects, tools and places the memories mention (found by entity extraction), most
// mentioned first, each with the memories that mention it.
export function Entities() {
  const [q, setQ] = useState('');
  const [offset, setOffset] = useState(0);
  const [entities, setEntities] = useState<Entity[] | null>(null);
  const [error, setError] = useState<string | null>(null);
  const load = () =>
    api
      .GET('/api/entities', { params: { query: { ...(q ? { q } : {}), limit: PAGE, offset } } })
      .then(unwrap)
      .then(
        (answer) => setEntities(answer.entities),
        (err: unknown) => setError(messageOf(err)),
      );
  useEffect(() => void load(), [q, offset]);
  return (
    <main>
      <h1>Entities</h1>
      <FindForm
        label="Find entities"
        placeholder="a name or an alias"
        onFind={(words) => {
          setOffset(0);
          setQ(words);
        }}
      />
      <ErrorNote error={error} />
      {entities === null && !error ? <Loading what="entities" /> : null}
      {entities?.length === 0 ? (
        <Empty>
          {q
            ? 'No entity matches.'
            : 'No entities yet: they are extracted from memories in the background (paid plans, or your own LLM key).'}
        </Empty>
      ) : null}
      <ul class="memories">
        {entities?.map((entity) => (
          <EntityItem key={entity.id} initial={entity} onDeleted={load} />
        ))}
      </ul>
      <Pager offset={offset} page={PAGE} shown={entities?.length ?? 0} onOffset={setOffset} />
    </main>
  );
}

function EntityItem({ initial, onDeleted }: { initial: Entity; onDeleted: () => Promise<void> }) {
  const [entity, setEntity] = useState(initial);
  const [open, setOpen] = useState(false);
  const [renaming, setRenaming] = useState(false);
  const action = useAction();
  const path = { params: { path: { id: entity.id } } };
  useEffect(() => {
    if (open && !entity.memories)
      void api
        .GET('/api/entities/{id}', { params: { path: { id: entity.id }, query: { include_memories: '1' } } })
        .then(unwrap)
        .then(setEntity, () => undefined);
  }, [open]);
  return (
    <li aria-label={entity.display_name}>
      <h2>{entity.display_name}</h2>
      <p class="meta">
        <span class="tag">{entity.entity_type}</span>
        <span>
          {entity.mention_count} {entity.mention_count === 1 ? 'mention' : 'mentions'}
        </span>
        {entity.aliases.length ? <span>also {entity.aliases.join(', ')}</span> : null}
      </p>
      {renaming ? (
        <form
          aria-label={`Rename ${entity.display_name}`}
          onSubmit={(event) => {
            event.preventDefault();
            const display_name = String(new FormData(event.currentTarget).get('name')).trim();
            void action.run(async () => {
              setEntity({
                ...(await unwrap(await api.PATCH('/api/entities/{id}', { ...path, body: { display_name } }))),
                memories: entity.memories,
              });
              setRenaming(false);
            });
          }}
        >
          <label>
            Name <input name="name" defaultValue={entity.display_name} required />
          </label>
          <button type="submit" disabled={action.busy}>
            Save
          </button>
        </form>
      ) : null}
      {open ? (
        entity.memories ? (
          <ul>
            {entity.memories.map((m) => (
              <li key={m.id}>
                <Link to={`/memories/${m.id}`}>{m.content}</Link>
              </li>
            ))}
          </ul>
        ) : (
          <Loading what="its memories" />
        )
      ) : null}
      <div class="actions">
        <button type="button" class="secondary" aria-expanded={open} onClick={() => setOpen(!open)}>
          {open ? 'Hide memories' : 'Memories'}
        </button>
        <button type="button" class="secondary" onClick={() => setRenaming(!renaming)}>
          Rename
        </button>
        <button
          type="button"
          class="danger"
          disabled={action.busy}
          onClick={() =>
            void action.run(async () => {
              if (!confirm(`Delete the entity “${entity.display_name}”? The memories stay.`)) return;
              await unwrap(await api.DELETE('/api/entities/{id}', path));
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
