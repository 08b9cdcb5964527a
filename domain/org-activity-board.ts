import type { MikroORM } from '@mikro-orm/postgresql';
import { randomUUID } from 'node:crypto';
import type { OrgActivity } from './org-activity.ts';
import { query, sql } from './sql.ts';

// How often an API process writes which orgs it serves, and how long a row counts: a process that stopped without
// clearing its row (a crash) stops counting after a few missed writes.
export const PUBLISH_EVERY_MS = 200;
const FRESH_FOR_MS = 2_000;
// How long the worker trusts what it read.
const READ_EVERY_MS = PUBLISH_EVERY_MS;

// Writes, every PUBLISH_EVERY_MS while it serves any org, the orgs with a request under way in this process or begun
// since the last write (org_activity, a row per process), so that the worker's background work for one org (an
// export's pages) leaves room for an org busy here. A write that fails is reported and the next one tries again.
export function publishOrgActivity(orm: MikroORM, activity: OrgActivity, onError: (err: unknown) => void): { stop(): Promise<void> } {
  // This process's row.
  const row = randomUUID();
  let published = 0;
  let writing: Promise<unknown> | undefined;
  const write = (orgIds: string[]) =>
    query(
      orm.em.fork(),
      sql`insert into org_activity (process, org_ids) values (${row}, ${orgIds}::uuid[])
          on conflict (process) do update set org_ids = excluded.org_ids, seen_at = now()`,
    );
  const timer = setInterval(() => {
    // A slow database: the next tick writes what this one would have, and more.
    if (writing) return;
    const orgIds = activity.takeSeen();
    // Idle since the last write, which said so: nothing to write.
    if (orgIds.length === 0 && published === 0) return;
    published = orgIds.length;
    writing = write(orgIds)
      .catch(onError)
      .finally(() => (writing = undefined));
  }, PUBLISH_EVERY_MS);
  timer.unref();
  return {
    async stop() {
      clearInterval(timer);
      await writing;
      await query(orm.em.fork(), sql`delete from org_activity where process = ${row}`).catch(onError);
    },
  };
}

// The orgs busy in the API's processes, as they last wrote (publishOrgActivity), read at most every READ_EVERY_MS.
export class OrgActivityBoard {
  readonly #orm: MikroORM;
  #orgs = new Set<string>();
  #readAt = -Infinity;
  #reading: Promise<void> | undefined;

  constructor(orm: MikroORM) {
    this.#orm = orm;
  }

  // Whether an org other than this one is busy in an API process.
  async othersActive(orgId: string): Promise<boolean> {
    if (performance.now() - this.#readAt >= READ_EVERY_MS)
      await (this.#reading ??= this.#read().finally(() => (this.#reading = undefined)));
    return this.#orgs.size > (this.#orgs.has(orgId) ? 1 : 0);
  }

  // A read that fails keeps what was read before: this only paces background work, which goes on meanwhile.
  async #read(): Promise<void> {
    try {
      const rows = await query<{ org_id: string }>(
        this.#orm.em.fork(),
        sql`select distinct unnest(org_ids) as org_id from org_activity
            where seen_at > now() - make_interval(secs => ${FRESH_FOR_MS / 1000})`,
      );
      this.#orgs = new Set(rows.map((r) => r.org_id));
    } catch {
      // Kept as it was.
    } finally {
      this.#readAt = performance.now();
    }
  }
}
