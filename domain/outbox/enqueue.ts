import type { EntityManager } from '@mikro-orm/postgresql';
import { newId } from '../ids.ts';
import { OutboxMessage } from './entities.ts';

export interface JobRequest {
  orgId: string | null;
  jobType: string;
  // Derived from the business key (for example `verification-mail-<id>`): the relay runs at most one
  // job per key, so a row dispatched twice still does its work once.
  jobKey: string;
  args: unknown[];
  // What the job is for, in words an operator reads.
  description: string;
}

// Called inside the transaction of the write that causes the work: the work exists exactly when the write does.
export function enqueueJob(em: EntityManager, request: JobRequest): void {
  em.create(OutboxMessage, {
    id: newId(),
    orgId: request.orgId,
    jobType: request.jobType,
    jobKey: request.jobKey,
    args: request.args,
    description: request.description,
    createdAt: new Date(),
    dispatchedAt: null,
    attempts: 0,
    lastError: null,
  });
}
