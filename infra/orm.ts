import { MikroORM, type EntityManager } from '@mikro-orm/postgresql';
import { Migrator } from '@mikro-orm/migrations';
import { parse } from 'pg-connection-string';
import type { DatabaseDeadlines } from './config.ts';
import { migrations } from '../migrations/index.ts';

export type Orm = MikroORM;
export type { EntityManager };

export interface OrmOptions {
  databaseUrl: string;
  poolMax?: number;
  debug?: boolean;
  // Without them (migrations, benchmarks' loaders) nothing is cut short.
  deadlines?: DatabaseDeadlines;
}

// pg's pool options: the wait for a free connection (pg-pool applies connectionTimeoutMillis to a queued caller
// too), and the session settings every connection starts with.
function deadlineOptions(deadlines: DatabaseDeadlines | undefined): Record<string, number> {
  if (!deadlines) return {};
  return {
    ...(deadlines.acquireMs > 0 ? { connectionTimeoutMillis: deadlines.acquireMs } : {}),
    statement_timeout: deadlines.statementMs,
    idle_in_transaction_session_timeout: deadlines.idleInTransactionMs,
  };
}

export async function openOrm(options: OrmOptions): Promise<MikroORM> {
  // MikroORM reads host, port, user and database from the URL and drops its other parameters: TLS is taken
  // from them here, as libpq and node-postgres spell it (sslmode, sslrootcert, sslcert, sslkey).
  const { ssl } = parse(options.databaseUrl);
  return MikroORM.init({
    clientUrl: options.databaseUrl,
    driverOptions: { ...(ssl === undefined ? {} : { ssl }), ...deadlineOptions(options.deadlines) },
    extensions: [Migrator],
    pool: { min: 0, max: options.poolMax ?? 10 },
    debug: options.debug ?? false,
    // Explicit list rather than file discovery: migrations are TypeScript modules loaded by Node itself.
    migrations: { migrationsList: migrations, transactional: true, allOrNothing: true, snapshot: false },
    allowGlobalContext: false,
    ensureDatabase: false,
    // No entities: the ORM is the connection, transaction and migration layer; data access is raw SQL.
    discovery: { warnWhenNoEntities: false },
  });
}

export async function migrate(orm: MikroORM): Promise<string[]> {
  const applied = await orm.migrator.up();
  return applied.map((m) => m.name);
}
