import { loadConfigOrExit } from './config.ts';
import { migrate, openOrm } from './orm.ts';

// `npm run migrate`: applies pending migrations to DATABASE_URL.
const config = loadConfigOrExit();
const orm = await openOrm({ databaseUrl: config.DATABASE_URL, poolMax: 2 });
try {
  const applied = await migrate(orm);
  process.stdout.write(applied.length ? `applied: ${applied.join(', ')}\n` : 'schema is up to date\n');
} finally {
  await orm.close();
}
