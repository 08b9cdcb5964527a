// One org of n memories written straight into a scratch database with SQL, for the benchmarks at a million
// (lists-at-scale.ts, semantic-at-scale.ts): seconds instead of the half hour the API would take. 20 projects
// (`project-0` ...), memory i in project i % 20 with tag `tag-<i % 50>`, one memory every 20 s from 2026-01-01;
// `content` and `metadata` are SQL expressions of i. The counters the searches read are written too.
import pg from 'pg';

// A scratch database beside the project's (ADMIN_DATABASE_URL names a database to connect to for creating it),
// created anew unless `reuse`; `close` drops it unless `keep`.
export async function scratchDatabase(
  name: string,
  { reuse = false } = {},
): Promise<{ url: string; close: (keep?: boolean) => Promise<void> }> {
  const admin = new URL(process.env.ADMIN_DATABASE_URL ?? 'postgres://memsvc:memsvc@127.0.0.1:5433/postgres');
  const scratch = new URL(admin);
  scratch.pathname = `/${name}`;
  const adminDb = new pg.Client({ connectionString: admin.toString() });
  await adminDb.connect();
  if (!reuse) {
    await adminDb.query(`drop database if exists ${name} with (force)`);
    await adminDb.query(`create database ${name}`);
  }
  return {
    url: scratch.toString(),
    close: async (keep = false) => {
      if (!keep) await adminDb.query(`drop database ${name} with (force)`);
      await adminDb.end();
    },
  };
}

export interface ScaleOrg {
  org: string;
  slug: string;
  n: number;
  content: string;
  metadata: string;
}

export const PROJECTS = 20;
// When memory i was created.
export const createdAt = (i: number): number => Date.parse('2026-01-01') + i * 20_000;

export async function writeScaleOrg(
  exec: (statement: string) => Promise<unknown>,
  { org, slug, n, content, metadata }: ScaleOrg,
): Promise<void> {
  const project = (i: string) => `('00000000-0000-0000-0001-' || lpad(${i}::text, 12, '0'))::uuid`;
  for (const statement of [
    `insert into orgs (id, slug, name, plan, created_at, updated_at) values ('${org}', '${slug}', '${slug}', 'enterprise', now(), now())`,
    `insert into namespaces (id, org_id, name, created_at, updated_at)
       select ${project('i')}, '${org}', 'project-' || i, now(), now() from generate_series(0, ${PROJECTS - 1}) i`,
    `insert into memories (id, org_id, namespace_id, content, stored_bytes, doc_len, tags, source, metadata, created_at, updated_at)
       select gen_random_uuid(), '${org}', ${project(`(i % ${PROJECTS})`)}, ${content}, octet_length(${content}), 10,
         array['tag-' || (i % 50)], 'api', ${metadata},
              timestamptz '2026-01-01' + make_interval(secs => i * 20), timestamptz '2026-01-01' + make_interval(secs => i * 20)
         from generate_series(0, ${n - 1}) i`,
    `insert into counters (org_id, scope_id, name, shard, value) values ('${org}', '${org}', 'memories', 0, ${n})`,
    `insert into counters (org_id, scope_id, name, shard, value)
       select '${org}', namespace_id, 'memories', 0, count(*) from memories where org_id = '${org}' group by namespace_id`,
    'vacuum analyze memories',
  ]) {
    await exec(statement);
  }
}
