import type { MikroORM } from '@mikro-orm/postgresql';
import type { Client } from '@temporalio/client';
import pg from 'pg';
import type { Logger } from 'pino';
import { query, sql } from '../domain/sql.ts';
import { fanOutEvents } from '../domain/webhooks/fanout.ts';
import { JOB_WORKFLOWS, SIGNAL_JOBS } from './jobs.ts';
import { signalWithStart, startOnce } from './start.ts';

interface OutboxRow {
  id: string;
  org_id: string | null;
  job_type: string;
  job_key: string;
  args: unknown[];
  description: string;
}

export interface RelayOptions {
  orm: MikroORM;
  client: Client;
  taskQueue: string;
  databaseUrl: string;
  logger: Logger;
  pollIntervalMs?: number;
  // Drains start at least this far apart. Under a stream of saves every commit notifies; without spacing the
  // relay would drain after each, and an org's curator would take one signal (a workflow task, and Temporal's
  // CPU) per commit. Spaced, the rows of a quarter second go as one signal per org.
  drainSpacingMs?: number;
  batchSize?: number;
  // Delays between webhook delivery attempts, stamped on each delivery made from an event.
  webhookRetrySchedule: number[];
}

// Moves committed outbox rows into Temporal. Rows are claimed with SKIP LOCKED, so any number of relays
// can run; each row becomes the workflow whose id is its job key, started at most once: a relay that
// dies after starting but before marking the row leaves it to the next relay, whose start is a no-op.
export class OutboxRelay {
  private readonly opts: Required<Omit<RelayOptions, 'logger'>> & { logger: Logger };
  private listener: pg.Client | undefined;
  private timer: NodeJS.Timeout | undefined;
  private pendingKick: NodeJS.Timeout | undefined;
  private lastDrain = 0;
  private draining: Promise<void> | undefined;
  private again = false;
  private stopped = false;

  constructor(options: RelayOptions) {
    this.opts = { pollIntervalMs: 1000, drainSpacingMs: 250, batchSize: 50, ...options };
  }

  async start(): Promise<void> {
    this.listener = new pg.Client({ connectionString: this.opts.databaseUrl });
    this.listener.on('notification', () => this.kick());
    this.listener.on('error', (err) => this.opts.logger.warn({ err }, 'outbox listener lost; polling continues'));
    await this.listener.connect();
    await this.listener.query('listen outbox');
    this.timer = setInterval(() => this.kick(), this.opts.pollIntervalMs);
    this.kick();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearInterval(this.timer);
    clearTimeout(this.pendingKick);
    await this.draining;
    await this.listener?.end().catch(() => undefined);
  }

  // Coalesces wake-ups: at most one drain runs, a wake-up during it schedules one more, and a wake-up sooner
  // than drainSpacingMs after the last drain began waits for the rest of that interval.
  private kick(): void {
    if (this.stopped || this.pendingKick) return;
    if (this.draining) {
      this.again = true;
      return;
    }
    const wait = this.lastDrain + this.opts.drainSpacingMs - performance.now();
    if (wait > 0) {
      this.pendingKick = setTimeout(() => {
        this.pendingKick = undefined;
        this.kick();
      }, wait);
      return;
    }
    this.lastDrain = performance.now();
    this.draining = this.drainAll()
      .catch((err) => this.opts.logger.error({ err }, 'outbox drain failed'))
      .finally(() => {
        this.draining = undefined;
        if (this.again && !this.stopped) {
          this.again = false;
          this.kick();
        }
      });
  }

  // Events first: their fan-out writes the delivery jobs that the outbox drain then starts.
  private async drainAll(): Promise<void> {
    while (!this.stopped && (await fanOutEvents(this.opts.orm.em.fork(), this.opts.webhookRetrySchedule)) > 0);
    while (!this.stopped && (await this.drainOnce()) === this.opts.batchSize);
  }

  // One batch in one transaction; returns how many rows it dispatched (a failure ends the drain until the next poll).
  async drainOnce(): Promise<number> {
    const em = this.opts.orm.em.fork();
    return em.transactional(async (tx) => {
      const rows = await query(
        tx,
        sql<OutboxRow>`select id, org_id, job_type, job_key, args, description from outbox
          where dispatched_at is null order by created_at, id limit ${this.opts.batchSize} for update skip locked`,
      );
      // Rows bound for one org's long-lived workflow become one signal; every other row starts its own workflow.
      const signals = new Map<string, OutboxRow[]>();
      const starts: OutboxRow[] = [];
      for (const row of rows) {
        if (SIGNAL_JOBS[row.job_type] && row.org_id) signals.set(`${row.job_type}/${row.org_id}`, [...(signals.get(`${row.job_type}/${row.org_id}`) ?? []), row]);
        else starts.push(row);
      }
      let dispatched = 0;
      const settle = async (group: OutboxRow[], send: () => Promise<unknown>) => {
        const ids = group.map((r) => r.id);
        try {
          await send();
          await query(tx, sql`update outbox set dispatched_at = now(), attempts = attempts + 1, last_error = null where id = any(${ids}::uuid[])`);
          dispatched += group.length;
        } catch (err) {
          await query(tx, sql`update outbox set attempts = attempts + 1, last_error = ${String(err)} where id = any(${ids}::uuid[])`);
          this.opts.logger.warn({ err, jobKeys: group.map((r) => r.job_key) }, 'outbox dispatch failed; will retry');
        }
      };
      for (const group of signals.values()) {
        const job = SIGNAL_JOBS[group[0]!.job_type]!;
        const orgId = group[0]!.org_id!;
        await settle(group, () =>
          signalWithStart(this.opts.client, this.opts.taskQueue, job.workflowType, job.signal, [job.merge(group.map((r) => r.args[0]))], {
            workflowId: job.workflowId(orgId),
            orgId,
            description: job.description,
            args: [job.initial(orgId)],
          }),
        );
      }
      for (const row of starts) {
        await settle([row], async () => {
          const workflowType = JOB_WORKFLOWS[row.job_type];
          if (!workflowType) throw new Error(`no workflow for job type ${row.job_type}`);
          const started = await startOnce(this.opts.client, this.opts.taskQueue, workflowType, { workflowId: row.job_key, orgId: row.org_id, description: row.description, args: row.args });
          this.opts.logger.debug({ workflowId: row.job_key, started }, 'outbox row dispatched');
        });
      }
      return dispatched;
    });
  }
}
