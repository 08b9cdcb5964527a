import type { EntityManager, MikroORM } from '@mikro-orm/postgresql';
import { context, propagation, ROOT_CONTEXT } from '@opentelemetry/api';
import type { Client } from '@temporalio/client';
import pg from 'pg';
import type { Logger } from 'pino';
import { NO_ORG } from '../domain/outbox/enqueue.ts';
import { query, sql } from '../domain/sql.ts';
import { fanOutEvents } from '../domain/webhooks/fanout.ts';
import { JOB_WORKFLOWS, SIGNAL_JOBS } from './jobs.ts';
import { isTemporalDown } from './outcome.ts';
import { CALL_DEADLINE_MS, signalWithStart, startOnce } from './start.ts';

interface OutboxRow {
  id: string;
  org_id: string;
  job_type: string;
  job_key: string;
  args: unknown[];
  description: string;
  trace_context: Record<string, string> | null;
  // As the driver hands timestamps over here: text.
  created_at: string;
}

// Rows by their key, (org_id, id): the outbox is keyed by org first (0013_tenant_keys).
const keyed = (rows: OutboxRow[]) =>
  sql`(org_id, id) in (select * from unnest(${rows.map((r) => r.org_id)}::uuid[], ${rows.map((r) => r.id)}::uuid[]))`;
const orgOf = (row: OutboxRow): string | null => (row.org_id === NO_ORG ? null : row.org_id);
// A row whose dispatch fails for a reason of its own (Temporal refused it) is tried again after 1, 2, 4 ...
// seconds, at most 10 minutes apart, and parked as failed after its last attempt: about 2 hours in all.
export const MAX_ATTEMPTS = 14;
const MAX_BACKOFF_SECONDS = 600;
const LISTEN_RETRY_MAX_MS = 30_000;

// While Temporal itself cannot be reached, nothing is any row's fault: rows are released untouched.
class TemporalUnreachable extends Error {}

export interface RelayOptions {
  orm: MikroORM;
  client: Client;
  taskQueue: string;
  databaseUrl: string;
  logger: Logger;
  pollIntervalMs?: number;
  // Drains start at least this far apart: under a stream of saves every commit notifies, and one drain takes the
  // rows of this interval together.
  drainSpacingMs?: number;
  // Rows bound for an org's long-lived workflow (SIGNAL_JOBS) are dispatched at least this far apart: otherwise an
  // org's curator would take a signal (a workflow task, and Temporal's CPU) per drain. Spaced, the rows of a
  // quarter second go as one signal per org, while a webhook delivery or a mail goes at the next drain.
  signalSpacingMs?: number;
  batchSize?: number;
  // A claimed row is this relay's for this long; a relay that dies with rows claimed leaves them to the next
  // one after it. A dispatch (one Temporal call) takes milliseconds and never more than CALL_DEADLINE_MS; a
  // batch still dispatching at half its lease renews it for the rows it has left.
  leaseSeconds?: number;
  // Delays between webhook delivery attempts, stamped on each delivery made from an event.
  webhookRetrySchedule: number[];
}

// Moves committed outbox rows into Temporal. Rows are claimed with SKIP LOCKED under a lease, so any number
// of relays can run, and no transaction stays open while Temporal is called. Each row becomes the workflow
// whose id is its job key, started at most once: a relay that dies after starting but before marking the
// row leaves it, once the lease ends, to the next relay, whose start is a no-op.
export class OutboxRelay {
  private readonly opts: Required<Omit<RelayOptions, 'logger'>> & { logger: Logger };
  private listener: pg.Client | undefined;
  private listenRetry: NodeJS.Timeout | undefined;
  private listenFailures = 0;
  private timer: NodeJS.Timeout | undefined;
  private pendingKick: NodeJS.Timeout | undefined;
  private lastDrain = 0;
  // When signal rows last went, and the wake-up for those held back since.
  private lastSignals = -Infinity;
  private signalKick: NodeJS.Timeout | undefined;
  private draining: Promise<void> | undefined;
  private again = false;
  private stopped = false;

  constructor(options: RelayOptions) {
    this.opts = { pollIntervalMs: 1000, drainSpacingMs: 20, signalSpacingMs: 250, batchSize: 50, leaseSeconds: 15, ...options };
  }

  async start(): Promise<void> {
    // The first LISTEN must work: a relay without its database at start is a configuration error.
    await this.listen(true);
    this.timer = setInterval(() => this.kick(), this.opts.pollIntervalMs);
    this.kick();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearInterval(this.timer);
    clearTimeout(this.pendingKick);
    clearTimeout(this.signalKick);
    clearTimeout(this.listenRetry);
    await this.draining;
    await this.listener?.end().catch(() => undefined);
  }

  // LISTEN on a connection of its own. When that connection drops (PostgreSQL restarted, a proxy cut it),
  // the relay listens again, retrying with backoff, and drains once it is back: a notification sent while
  // nobody listened is lost, the rows it announced are not. Polling covers the gap.
  private async listen(first = false): Promise<void> {
    const listener = new pg.Client({ connectionString: this.opts.databaseUrl });
    this.listener = listener;
    let lost = false;
    const onLost = (err?: Error) => {
      if (lost || this.stopped) return;
      lost = true;
      this.opts.logger.warn({ err }, 'outbox listener lost; polling until it is back');
      listener.end().catch(() => undefined);
      this.scheduleListen();
    };
    listener.on('notification', () => this.kick());
    listener.on('error', onLost);
    listener.on('end', () => onLost());
    try {
      await listener.connect();
      await listener.query('listen outbox');
    } catch (err) {
      if (first) {
        lost = true;
        await listener.end().catch(() => undefined);
        throw err;
      }
      onLost(err as Error);
      return;
    }
    if (this.listenFailures > 0) this.opts.logger.info('outbox listener back');
    this.listenFailures = 0;
    if (!first) this.kick();
  }

  private scheduleListen(): void {
    if (this.stopped || this.listenRetry) return;
    const delay = Math.min(LISTEN_RETRY_MAX_MS, 250 * 2 ** this.listenFailures++);
    this.listenRetry = setTimeout(() => {
      this.listenRetry = undefined;
      if (!this.stopped) void this.listen();
    }, delay);
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

  // Claims one batch (one short statement), dispatches it outside any transaction and marks each row.
  // Returns how many rows it claimed; an unreachable Temporal releases the batch and ends the drain. Signal rows
  // sooner than signalSpacingMs after the last that went stay for a wake-up when they are due.
  async drainOnce(): Promise<number> {
    const em = this.opts.orm.em.fork();
    const signalsDue = performance.now() - this.lastSignals >= this.opts.signalSpacingMs;
    if (signalsDue) this.lastSignals = performance.now();
    else
      this.signalKick ??= setTimeout(
        () => {
          this.signalKick = undefined;
          this.kick();
        },
        this.lastSignals + this.opts.signalSpacingMs - performance.now(),
      );
    const rows = await query(
      em,
      sql<OutboxRow>`update outbox set claimed_until = now() + make_interval(secs => ${this.opts.leaseSeconds})
        where (org_id, id) in (
          select org_id, id from outbox
          where dispatched_at is null and failed_at is null
            and (claimed_until is null or claimed_until < now())
            and (next_attempt_at is null or next_attempt_at <= now())
            and (${signalsDue} or job_type <> all(${Object.keys(SIGNAL_JOBS)}::text[]))
          order by created_at, id limit ${this.opts.batchSize} for update skip locked)
        returning id, org_id, job_type, job_key, args, description, trace_context, created_at`,
    );
    rows.sort((a, b) => Date.parse(a.created_at) - Date.parse(b.created_at) || a.id.localeCompare(b.id));
    // Rows bound for one org's long-lived workflow become one signal; every other row starts its own workflow.
    const groups: { rows: OutboxRow[]; send: () => Promise<unknown> }[] = [];
    const signals = new Map<string, OutboxRow[]>();
    for (const row of rows) {
      const key = `${row.job_type}/${row.org_id}`;
      if (SIGNAL_JOBS[row.job_type] && orgOf(row)) {
        if (!signals.has(key)) signals.set(key, []);
        signals.get(key)!.push(row);
      } else {
        groups.push({ rows: [row], send: () => this.startJob(row) });
      }
    }
    for (const group of signals.values()) groups.unshift({ rows: group, send: () => this.signalJob(group) });

    let leasedAt = performance.now();
    for (const [index, group] of groups.entries()) {
      if (performance.now() - leasedAt > (this.opts.leaseSeconds * 1000) / 2) {
        await this.renewLease(
          em,
          groups.slice(index).flatMap((g) => g.rows),
        );
        leasedAt = performance.now();
      }
      try {
        // The Temporal call continues the trace of the request that wrote the row (a signal, of its first row).
        await context.with(propagation.extract(ROOT_CONTEXT, group.rows[0]!.trace_context ?? {}), group.send);
        await query(
          em,
          sql`update outbox set dispatched_at = now(), attempts = attempts + 1, last_error = null, claimed_until = null
            where ${keyed(group.rows)}`,
        );
      } catch (err) {
        if (err instanceof TemporalUnreachable) {
          const rest = groups.slice(index).flatMap((g) => g.rows);
          await query(em, sql`update outbox set claimed_until = null, last_error = ${String(err.cause)} where ${keyed(rest)}`);
          this.opts.logger.warn({ err: err.cause }, 'Temporal unreachable; outbox rows stay queued');
          return 0;
        }
        await this.recordFailure(em, group.rows, err);
      }
    }
    return rows.length;
  }

  private async renewLease(em: EntityManager, rows: OutboxRow[]): Promise<void> {
    await query(em, sql`update outbox set claimed_until = now() + make_interval(secs => ${this.opts.leaseSeconds}) where ${keyed(rows)}`);
  }

  private async recordFailure(em: EntityManager, rows: OutboxRow[], err: unknown): Promise<void> {
    const failed = await query(
      em,
      sql<{
        job_key: string;
        attempts: number;
        failed: boolean;
      }>`update outbox set attempts = attempts + 1, last_error = ${String(err)}, claimed_until = null,
          next_attempt_at = now() + make_interval(secs => least(${MAX_BACKOFF_SECONDS}, power(2, attempts))),
          failed_at = case when attempts + 1 >= ${MAX_ATTEMPTS} then now() end
        where ${keyed(rows)} returning job_key, attempts, failed_at is not null as failed`,
    );
    const parked = failed.filter((r) => r.failed).map((r) => r.job_key);
    if (parked.length > 0)
      this.opts.logger.error({ err, jobKeys: parked, attempts: MAX_ATTEMPTS }, 'outbox rows failed for good; parked (outbox.failed_at)');
    else this.opts.logger.warn({ err, jobKeys: rows.map((r) => r.job_key) }, 'outbox dispatch failed; will retry with backoff');
  }

  private async startJob(row: OutboxRow): Promise<void> {
    const workflow = JOB_WORKFLOWS[row.job_type];
    if (!workflow) throw new Error(`no workflow for job type ${row.job_type}`);
    const started = await this.call(() =>
      startOnce(this.opts.client, this.opts.taskQueue, workflow, {
        workflowId: row.job_key,
        orgId: orgOf(row),
        description: row.description,
        args: row.args,
      }),
    );
    this.opts.logger.debug({ workflowId: row.job_key, started }, 'outbox row dispatched');
  }

  private async signalJob(group: OutboxRow[]): Promise<void> {
    const job = SIGNAL_JOBS[group[0]!.job_type]!;
    const orgId = group[0]!.org_id;
    await this.call(() =>
      signalWithStart(this.opts.client, this.opts.taskQueue, job.workflow, job.signal, [job.merge(group.map((r) => r.args[0]))], {
        workflowId: job.workflowId(orgId),
        orgId,
        description: job.description,
        args: [job.initial(orgId)],
      }),
    );
  }

  // Tells Temporal's own trouble (it is down, overloaded, or timing out) from a refusal of this row.
  private async call<T>(fn: () => Promise<T>): Promise<T> {
    try {
      return await this.opts.client.withDeadline(Date.now() + CALL_DEADLINE_MS, fn);
    } catch (err) {
      if (isTemporalDown(err)) throw new TemporalUnreachable('Temporal unreachable', { cause: err });
      throw err;
    }
  }
}
