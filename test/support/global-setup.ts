import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import type { TestProject } from 'vitest/node';
import { openOrm, migrate } from '../../infra/orm.ts';
import { TemporalDevServer } from './temporal-server.ts';

declare module 'vitest' {
  export interface ProvidedContext {
    templateDatabaseUrl: string;
    adminDatabaseUrl: string;
    temporalAddress: string;
    temporalBin: string;
    workflowBundlePath: string;
  }
}

const required = (name: string): string => {
  const value = process.env[name];
  if (!value) throw new Error(`${name} is not set: run the suite with scripts/test.sh`);
  return value;
};

// Once per run: a fresh, migrated template database (each test file clones its own from it) and one Temporal dev
// server; every test file's worker runs the workflow bundle scripts/test.sh built.
export default async function setup(project: TestProject) {
  const databaseUrl = required('DATABASE_URL');
  const adminDatabaseUrl = required('TEST_ADMIN_DATABASE_URL');
  const temporalBin = required('TEMPORAL_BIN');
  const dbName = new URL(databaseUrl).pathname.slice(1);
  const admin = new pg.Client({ connectionString: adminDatabaseUrl });
  await admin.connect();
  const leftovers = await admin.query<{ datname: string }>(`select datname from pg_database where datname like $1`, [`${dbName}%`]);
  for (const { datname } of leftovers.rows) await admin.query(`drop database if exists "${datname}" with (force)`);
  await admin.query(`create database "${dbName}"`);
  await admin.end();
  const orm = await openOrm({ databaseUrl, poolMax: 2 });
  await migrate(orm);
  await orm.close();

  const dir = await mkdtemp(join(tmpdir(), 'memsvc-test-'));
  const temporal = await TemporalDevServer.create(temporalBin, join(dir, 'temporal.db'));
  await temporal.start();
  // Built by scripts/test.sh (ensure_workflow_bundle), as the worker processes of scripts/start.sh use it.
  const workflowBundlePath = required('WORKFLOW_BUNDLE_PATH');

  project.provide('templateDatabaseUrl', databaseUrl);
  project.provide('adminDatabaseUrl', adminDatabaseUrl);
  project.provide('temporalAddress', temporal.address);
  project.provide('temporalBin', temporalBin);
  project.provide('workflowBundlePath', workflowBundlePath);

  return async () => {
    await temporal.stop();
    await rm(dir, { recursive: true, force: true });
  };
}
