import { readFile } from 'node:fs/promises';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase } from '../support/database.ts';

// The migrated schema must stay ready to be distributed by org on Citus (docs/operations.md, "Distributing by
// tenant"). Every table is a tenant table unless it is listed here: a tenant table has a NOT NULL uuid org_id,
// its primary key and every unique index start with org_id (Citus enforces uniqueness only within a shard, so
// a unique key must hold the distribution column), and its foreign keys to other tenant tables carry org_id
// on both sides (co-located, so each check stays on one shard). A new table has to choose.
const SHARED: Record<string, { kind: 'reference' | 'coordinator'; why: string }> = {
  orgs: {
    kind: 'reference',
    why: 'one row per org, read by every request and referenced by every tenant table; slugs are unique across orgs',
  },
  users: { kind: 'reference', why: 'a user belongs to many orgs; e-mail addresses are unique across orgs' },
  memberships: { kind: 'reference', why: "joins users to orgs: read by user (a user's orgs) and joined with credentials on every request" },
  credentials: {
    kind: 'reference',
    why: 'every request finds its credential by secret hash, before any org is known; hashes are unique across orgs',
  },
  email_verifications: { kind: 'reference', why: "a user's, not an org's; found by token hash before any org is known" },
  password_resets: { kind: 'reference', why: "a user's, not an org's; found by token hash before any org is known" },
  user_identities: { kind: 'reference', why: "a user's link to the identity provider, found by issuer and subject at sign-in" },
  oauth_requests: { kind: 'coordinator', why: 'a pending sign-in, before any user or org is known; joined with nothing' },
  oauth_clients: {
    kind: 'reference',
    why: 'an OAuth client registers before any user or org is known, and is then authorized in many orgs',
  },
  oauth_codes: { kind: 'reference', why: 'an authorization code is found by its hash at the token endpoint, before any org is known' },
  oauth_grants: {
    kind: 'reference',
    why: 'a refresh token is found by its hash before any org is known; one row per credential, which is shared too',
  },
  mail_messages: {
    kind: 'coordinator',
    why: 'outgoing mail of users and addresses, unique by dedupe key across orgs; joined with nothing',
  },
  rate_limit_windows: {
    kind: 'coordinator',
    why: 'keyed by credential or client address; written on every write request, so replicating it to every node would cost each write',
  },
  org_activity: {
    kind: 'coordinator',
    why: "a row per API process naming the orgs it serves, written a few times a second and read by the worker; joined with nothing",
  },
  billing_events: { kind: 'coordinator', why: "the payment processor's events by its own id, some of no known org; joined with nothing" },
  mikro_orm_migrations: { kind: 'coordinator', why: "the migrator's own record; migrations run on the coordinator" },
};

let db: pg.Client;

beforeAll(async () => {
  db = new pg.Client({ connectionString: await createTestDatabase() });
  await db.connect();
});

afterAll(async () => db?.end());

interface Key {
  table: string;
  name: string;
  primary: boolean;
  columns: (string | null)[];
}

interface ForeignKey {
  table: string;
  name: string;
  referenced: string;
  columns: string[];
  referencedColumns: string[];
}

const tables = async (): Promise<string[]> =>
  (
    await db.query<{ name: string }>(
      `select c.relname as name from pg_class c where c.relnamespace = current_schema()::regnamespace and c.relkind in ('r', 'p')
        order by 1`,
    )
  ).rows.map((r) => r.name);

// Primary keys and unique indexes (constraints or not) with their key columns in order; null for an expression.
const uniqueKeys = async (): Promise<Key[]> =>
  (
    await db.query<Key>(`
      select t.relname as table, ic.relname as name, i.indisprimary as primary,
             array(select a.attname::text from unnest(i.indkey) with ordinality k(attnum, ord)
                     left join pg_attribute a on a.attrelid = i.indrelid and a.attnum = k.attnum
                    where k.ord <= i.indnkeyatts order by k.ord) as columns
        from pg_index i join pg_class t on t.oid = i.indrelid join pg_class ic on ic.oid = i.indexrelid
       where t.relnamespace = current_schema()::regnamespace and i.indisunique`)
  ).rows;

const foreignKeys = async (): Promise<ForeignKey[]> =>
  (
    await db.query<ForeignKey>(`
      select t.relname as table, c.conname as name, r.relname as referenced,
             array(select a.attname::text from unnest(c.conkey) with ordinality k(attnum, ord)
             join pg_attribute a on a.attrelid = c.conrelid and a.attnum = k.attnum order by k.ord) as columns,
             array(select a.attname::text from unnest(c.confkey) with ordinality k(attnum, ord)
             join pg_attribute a on a.attrelid = c.confrelid and a.attnum = k.attnum order by k.ord) as "referencedColumns"
        from pg_constraint c join pg_class t on t.oid = c.conrelid join pg_class r on r.oid = c.confrelid
       where c.contype = 'f' and t.relnamespace = current_schema()::regnamespace`)
  ).rows;

// What each tenant table breaks, as "table: rule" lines.
async function violations(): Promise<string[]> {
  const all = await tables();
  const tenant = new Set(all.filter((t) => !(t in SHARED)));
  const found: string[] = [];
  const orgColumns = await db.query<{ table: string; type: string; not_null: boolean }>(`
    select c.relname as table, format_type(a.atttypid, a.atttypmod) as type, a.attnotnull as not_null
      from pg_attribute a join pg_class c on c.oid = a.attrelid
     where c.relnamespace = current_schema()::regnamespace and a.attname = 'org_id' and not a.attisdropped`);
  const orgColumn = new Map(orgColumns.rows.map((r) => [r.table, r]));
  for (const table of tenant) {
    const column = orgColumn.get(table);
    if (!column) found.push(`${table}: a tenant table needs an org_id column (or a place in SHARED, with why)`);
    else if (column.type !== 'uuid' || !column.not_null)
      found.push(`${table}: org_id must be uuid not null, is ${column.type}${column.not_null ? ' not null' : ' nullable'}`);
  }
  const keys = await uniqueKeys();
  for (const table of tenant) {
    if (!keys.some((k) => k.table === table && k.primary)) found.push(`${table}: a tenant table needs a primary key starting with org_id`);
  }
  for (const key of keys.filter((k) => tenant.has(k.table) && k.columns[0] !== 'org_id')) {
    found.push(
      `${key.table}: ${key.primary ? 'primary key' : 'unique index'} ${key.name} ` +
        `(${key.columns.map((c) => c ?? '<expression>').join(', ')}) must start with org_id`,
    );
  }
  for (const fk of await foreignKeys()) {
    if (!tenant.has(fk.referenced)) continue;
    if (!tenant.has(fk.table)) {
      found.push(`${fk.table}: shared table's foreign key ${fk.name} references tenant table ${fk.referenced}`);
      continue;
    }
    const at = fk.columns.indexOf('org_id');
    if (at < 0 || fk.referencedColumns[at] !== 'org_id') {
      found.push(
        `${fk.table}: foreign key ${fk.name} (${fk.columns.join(', ')}) to tenant table ${fk.referenced} must pair org_id ` +
          `with ${fk.referenced}.org_id`,
      );
    }
  }
  return found;
}

describe('tenant keys', () => {
  it('every table is a tenant table keyed by org_id first, or a shared table listed with its reason', async () => {
    expect(await violations()).toEqual([]);
  });

  it('lists no shared table that does not exist', async () => {
    const all = new Set(await tables());
    expect(Object.keys(SHARED).filter((t) => !all.has(t))).toEqual([]);
  });

  it('reports a tenant table that breaks the rule, naming it and the rule', async () => {
    await db.query('begin');
    try {
      await db.query(`create table probe_items (id uuid primary key, org_id uuid, code text unique)`);
      await db.query(
        `create table probe_links (org_id uuid not null, item_id uuid not null references probe_items (id), primary key (org_id, item_id))`,
      );
      const found = (await violations()).filter((v) => v.startsWith('probe_'));
      expect(found).toEqual(
        expect.arrayContaining([
          'probe_items: org_id must be uuid not null, is uuid nullable',
          'probe_items: primary key probe_items_pkey (id) must start with org_id',
          'probe_items: unique index probe_items_code_key (code) must start with org_id',
          'probe_links: foreign key probe_links_item_id_fkey (item_id) to tenant table probe_items must pair org_id with ' +
            'probe_items.org_id',
        ]),
      );
      expect(found).toHaveLength(4);
    } finally {
      await db.query('rollback');
    }
  });

  // The SQL an operator runs names the same tables as this test (docs/operations.md).
  it('docs/operations.md distributes exactly the tenant tables and replicates exactly the reference tables', async () => {
    const doc = await readFile(new URL('../../docs/operations.md', import.meta.url), 'utf8');
    const named = (fn: string) => [...doc.matchAll(new RegExp(`${fn}\\('([a-z_]+)'`, 'g'))].map((m) => m[1]!).sort();
    const all = await tables();
    expect(named('create_distributed_table')).toEqual(all.filter((t) => !(t in SHARED)).sort());
    expect(named('create_reference_table')).toEqual(
      Object.keys(SHARED)
        .filter((t) => SHARED[t]!.kind === 'reference')
        .sort(),
    );
  });
});
