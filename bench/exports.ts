// Export benchmark: exports the bench org's memories as ndjson and CSV through the API, timing each job
// and reading the worker's and the API's peak resident memory (VmHWM) from /proc.
import pg from 'pg';
import { ApiClient } from '../test/support/api-client.ts';
import { memoryMb } from './lib/proc.ts';
import { createHash, randomBytes } from 'node:crypto';

const api = new ApiClient(process.env.BENCH_API_URL ?? 'http://127.0.0.1:3099');

// A token for the largest org of the bench database.
const db = new pg.Client({ connectionString: process.env.DATABASE_URL });
await db.connect();
const {
  rows: [org],
} = await db.query(`select org_id, count(*)::int as n from memories group by org_id order by 2 desc limit 1`);
const {
  rows: [member],
} = await db.query(`select user_id from memberships where org_id = $1 limit 1`, [org.org_id]);
const raw = `svc_${randomBytes(32).toString('base64url')}`;
await db.query(
  `insert into credentials (id, kind, org_id, user_id, name, prefix, secret_hash, created_at)
    values (gen_random_uuid(), 'api', $1, $2, 'bench-export', $3, $4, now())`,
  [org.org_id, member.user_id, raw.slice(0, 8), createHash('sha256').update(raw).digest('hex')],
);
await db.end();

console.log(`| format | memories | export job | download | file size | worker peak RSS | API peak RSS |`);
console.log('|---|---|---|---|---|---|---|');
for (const format of ['ndjson', 'csv']) {
  const started = performance.now();
  const job = await api.post('/api/memories/exports', { token: raw, body: { format } });
  let status = job.body;
  while (status.status === 'pending') {
    await new Promise((r) => setTimeout(r, 250));
    status = (await api.request('GET', `/api/memories/exports`, { token: raw })).body.exports.find(
      (e: { id: string }) => e.id === job.body.id,
    );
  }
  const jobSeconds = (performance.now() - started) / 1000;
  const t = performance.now();
  const res = await fetch(`${api.baseUrl}/api/memories/exports/${job.body.id}/download`, { headers: { authorization: `Bearer ${raw}` } });
  let bytes = 0;
  for await (const chunk of res.body!) bytes += (chunk as Uint8Array).length;
  const downloadSeconds = (performance.now() - t) / 1000;
  console.log(
    `| ${format} | ${status.row_count} of ${org.n} | ${jobSeconds.toFixed(1)} s | ${downloadSeconds.toFixed(1)} s | ` +
      `${(bytes / 1e6).toFixed(1)} MB | ${memoryMb(process.env.STACK_WORKER_PID).peak} MB | ` +
      `${memoryMb(process.env.STACK_API_PID).peak} MB |`,
  );
}
