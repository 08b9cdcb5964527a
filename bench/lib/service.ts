// Helpers the benchmarks share for driving the running service over HTTP.
import { setTimeout as sleep } from 'node:timers/promises';
import pg from 'pg';
import type { ApiClient } from '../../test/support/api-client.ts';

export const paidOrgPassword = 'quality-password';

// A fresh org on a paid plan (past the free plan's 500 memories), set directly as the billing webhook would.
export async function paidOrg(api: ApiClient, label: string): Promise<{ orgId: string; token: string; email: string; password: string }> {
  const email = `${label}-${Date.now()}@example.test`;
  const password = paidOrgPassword;
  const signup = await api.post('/api/auth/signup', { body: { email, password, name: 'Quality', org_name: label } });
  if (signup.status !== 201) throw new Error(`signup answered ${signup.status}: ${signup.text}`);
  const db = new pg.Client({ connectionString: process.env.DATABASE_URL });
  await db.connect();
  await db.query(`update orgs set plan = 'team' where id = $1`, [signup.body.org.id]);
  await db.end();
  return { orgId: signup.body.org.id, token: signup.body.api_token.raw, email, password };
}

// The org's memories, how many of them have a vector of the current model, and that model (null: none configured).
export async function embeddingStatus(api: ApiClient, token: string): Promise<{ model: string | null; embedded: number; total: number }> {
  const res = await api.get('/api/memories/embeddings', { token });
  if (res.status !== 200) throw new Error(`GET /api/memories/embeddings answered ${res.status}: ${res.text}`);
  return res.body as { model: string | null; embedded: number; total: number };
}

// Waits until the org's curator has embedded every memory (semantic results mean little before), printing progress.
export async function untilEmbedded(api: ApiClient, token: string, timeoutMs = 10 * 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let last = '';
  for (;;) {
    const { model, embedded, total } = await embeddingStatus(api, token);
    if (model === null) throw new Error('the service has no embedding model configured: semantic search is unavailable');
    const progress = `embedded ${embedded}/${total} (${model})`;
    if (progress !== last) console.error(progress);
    last = progress;
    if (total > 0 && embedded === total) return;
    if (Date.now() > deadline) throw new Error(`embeddings not done after ${timeoutMs / 60_000} minutes: ${progress}`);
    await sleep(1000);
  }
}

// Waits until no vacuum or index build is under way in the service's database (DATABASE_URL): either keeps a core
// busy for seconds to minutes, so a measurement that should compare like with like starts after them.
export async function untilDatabaseQuiet(timeoutMs = 10 * 60_000): Promise<void> {
  const db = new pg.Client({ connectionString: process.env.DATABASE_URL });
  await db.connect();
  try {
    const deadline = Date.now() + timeoutMs;
    for (let reported = false; ; reported = true) {
      const { rows } = await db.query<{ busy: string | null }>(
        `select string_agg(left(query, 80), '; ') as busy from pg_stat_activity
          where datname = current_database() and pid <> pg_backend_pid()
            and (backend_type = 'autovacuum worker' or pid in (select pid from pg_stat_progress_create_index))`,
      );
      const busy = rows[0]?.busy;
      if (!busy) return;
      if (!reported) console.error(`waiting for the database: ${busy}`);
      if (Date.now() > deadline) throw new Error(`the database still busy after ${timeoutMs / 60_000} minutes: ${busy}`);
      await sleep(1000);
    }
  } finally {
    await db.end();
  }
}
