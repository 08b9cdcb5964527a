import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { inject } from 'vitest';

// A database of its own for a test file, cloned from the run's migrated template: files running in
// parallel never see each other's rows, so an outbox relay in one file never dispatches another's jobs.
export async function createTestDatabase(): Promise<string> {
  const template = new URL(inject('templateDatabaseUrl'));
  const templateName = template.pathname.slice(1);
  const name = `${templateName}_${randomBytes(4).toString('hex')}`;
  const admin = new pg.Client({ connectionString: inject('adminDatabaseUrl') });
  await admin.connect();
  try {
    await admin.query(`create database "${name}" template "${templateName}"`);
  } finally {
    await admin.end();
  }
  template.pathname = `/${name}`;
  return template.toString();
}
