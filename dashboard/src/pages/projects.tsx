import { useEffect, useState } from 'preact/hooks';
import type { components } from '../../../clients/typescript/src/index.ts';
import { api, messageOf, unwrap } from '../api.ts';
import { Link } from '../router.tsx';
import { Empty, ErrorNote, Loading, useAction, when } from '../ui.tsx';

type Project = components['schemas']['Project'];

// Projects are the namespaces memories are saved into. Members read them; admins and owners change them.
export function Projects({ canManage }: { canManage: boolean }) {
  const [projects, setProjects] = useState<Project[] | null>(null);
  const [error, setError] = useState<string | null>(null);
  const load = () =>
    api
      .GET('/api/projects')
      .then(unwrap)
      .then(
        (answer) => setProjects(answer.projects),
        (err: unknown) => setError(messageOf(err)),
      );
  useEffect(() => void load(), []);
  return (
    <main>
      <h1>Projects</h1>
      {canManage ? null : <p class="muted">Your role lets you read projects; admins and owners rename, archive and delete them.</p>}
      <ErrorNote error={error} />
      {projects === null && !error ? <Loading what="projects" /> : null}
      {projects?.length === 0 ? <Empty>No projects yet: a project appears when a memory is saved into it.</Empty> : null}
      <ul class="memories">
        {projects?.map((project) => (
          <ProjectItem key={project.id} project={project} canManage={canManage} onChanged={load} />
        ))}
      </ul>
    </main>
  );
}

function ProjectItem({ project, canManage, onChanged }: { project: Project; canManage: boolean; onChanged: () => Promise<void> }) {
  const [mode, setMode] = useState<'view' | 'edit' | 'delete'>('view');
  const action = useAction();
  const patch = (body: { name?: string; description?: string | null; archived?: boolean }) =>
    action.run(async () => {
      await unwrap(await api.PATCH('/api/projects/{id}', { params: { path: { id: project.id } }, body }));
      setMode('view');
      await onChanged();
    });
  return (
    <li>
      <h2>
        <Link to={`/?namespace=${encodeURIComponent(project.name)}`}>{project.name}</Link>{' '}
        {project.archived_at ? <span class="tag">archived</span> : null}
      </h2>
      {project.description ? <p>{project.description}</p> : null}
      <p class="meta">
        <span>
          {project.memory_count.toLocaleString()} {project.memory_count === 1 ? 'memory' : 'memories'}
        </span>
        <span>last active {when(project.last_activity_at)}</span>
      </p>
      {mode === 'edit' ? (
        <form
          aria-label={`Edit ${project.name}`}
          onSubmit={(event) => {
            event.preventDefault();
            const form = new FormData(event.currentTarget);
            const description = String(form.get('description')).trim();
            void patch({ name: String(form.get('name')).trim(), description: description || null });
          }}
        >
          <label>
            Name <input name="name" defaultValue={project.name} required />
          </label>
          <label class="wide">
            Description <input name="description" defaultValue={project.description ?? ''} />
          </label>
          <button type="submit" disabled={action.busy}>
            Save
          </button>
          <button type="button" class="secondary" onClick={() => setMode('view')}>
            Cancel
          </button>
        </form>
      ) : null}
      {mode === 'delete' ? (
        <form
          aria-label={`Delete ${project.name}`}
          onSubmit={async (event) => {
            event.preventDefault();
            await action.run(async () => {
              await unwrap(await api.DELETE('/api/projects/{id}', { params: { path: { id: project.id } } }));
              await onChanged();
            });
          }}
        >
          <p class="error">
            This deletes the project and its {project.memory_count.toLocaleString()} memories for good. Type <strong>{project.name}</strong>{' '}
            to confirm.
          </p>
          <label>
            Project name <input name="confirm" autocomplete="off" required pattern={project.name.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')} />
          </label>
          <button type="submit" class="danger" disabled={action.busy}>
            Delete for good
          </button>
          <button type="button" class="secondary" onClick={() => setMode('view')}>
            Cancel
          </button>
        </form>
      ) : null}
      {mode === 'view' && canManage ? (
        <div class="actions">
          <button type="button" class="secondary" onClick={() => setMode('edit')}>
            Rename or describe
          </button>
          <button type="button" class="secondary" onClick={() => void patch({ archived: !project.archived_at })}>
            {project.archived_at ? 'Unarchive' : 'Archive'}
          </button>
          <button type="button" class="danger" onClick={() => setMode('delete')}>
            Delete…
          </button>
        </div>
      ) : null}
      <ErrorNote error={action.error} upgradeUrl={action.upgradeUrl} />
    </li>
  );
}
