import { useEffect, useState } from 'preact/hooks';
import type { components } from '../../../clients/typescript/src/index.ts';
import { api, messageOf, unwrap } from '../api.ts';
import { Empty, ErrorNote, Loading, useAction, when } from '../ui.tsx';

type Job = components['schemas']['ExportJob'];
// While a job runs, its row count is read again this often.
const POLL_MS = 1000;

export function Exports() {
  const [jobs, setJobs] = useState<Job[] | null>(null);
  const [error, setError] = useState<string | null>(null);
  const create = useAction();
  const load = () =>
    api
      .GET('/api/memories/exports')
      .then(unwrap)
      .then(
        (answer) => setJobs(answer.exports),
        (err: unknown) => setError(messageOf(err)),
      );
  useEffect(() => void load(), []);
  const running = jobs?.some((job) => job.status === 'pending') ?? false;
  useEffect(() => {
    if (!running) return;
    const timer = setInterval(() => void load(), POLL_MS);
    return () => clearInterval(timer);
  }, [running]);

  return (
    <main>
      <h1>Exports</h1>
      <p class="muted">An export writes every memory matching the filters to a file, in the background. Files are kept for 7 days.</p>
      <form
        class="add"
        aria-label="Start an export"
        onSubmit={async (event) => {
          event.preventDefault();
          const form = new FormData(event.currentTarget);
          const namespace = String(form.get('namespace')).trim();
          const tags = String(form.get('tags'))
            .split(',')
            .map((t) => t.trim())
            .filter(Boolean);
          await create.run(async () => {
            const filters = { ...(namespace ? { namespace } : {}), ...(tags.length ? { tags } : {}) };
            await unwrap(await api.POST('/api/memories/exports', { body: { format: form.get('format') as Job['format'], filters } }));
            await load();
          });
        }}
      >
        <label>
          Format
          <select name="format" defaultValue="ndjson">
            <option value="ndjson">JSON lines</option>
            <option value="csv">CSV</option>
          </select>
        </label>
        <label>
          Project <input name="namespace" placeholder="all" />
        </label>
        <label>
          Tags (all of) <input name="tags" placeholder="any" />
        </label>
        <button type="submit" disabled={create.busy}>
          Start export
        </button>
        <ErrorNote error={create.error} upgradeUrl={create.upgradeUrl} />
      </form>
      <ErrorNote error={error} />
      {jobs === null && !error ? <Loading what="exports" /> : null}
      {jobs?.length === 0 ? <Empty>No exports yet.</Empty> : null}
      {jobs?.length ? (
        <table>
          <caption class="visually-hidden">Exports, newest first</caption>
          <thead>
            <tr>
              <th scope="col">Started</th>
              <th scope="col">Format</th>
              <th scope="col">Status</th>
              <th scope="col">Memories</th>
              <th scope="col">File</th>
            </tr>
          </thead>
          <tbody>
            {jobs.map((job) => (
              <tr key={job.id}>
                <td data-label="Started">{when(job.created_at)}</td>
                <td data-label="Format">{job.format}</td>
                <td data-label="Status" role="status">
                  {job.status === 'failed'
                    ? `failed: ${job.error ?? 'unknown error'}`
                    : job.status === 'pending'
                      ? 'running…'
                      : `done ${job.completed_at ? when(job.completed_at) : ''}`}
                </td>
                <td data-label="Memories">{job.row_count.toLocaleString()}</td>
                <td data-label="File">
                  {job.status === 'completed' ? (
                    <a href={`/api/memories/exports/${job.id}/download`} download>
                      Download
                    </a>
                  ) : null}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      ) : null}
    </main>
  );
}
