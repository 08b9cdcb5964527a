import { ApplicationFailure } from '@temporalio/common';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { curatorWorkflowId } from '../../domain/store/curate.ts';
import { backlogQuery } from '../../workflows/memory-curator.ts';
import { llmEnv } from '../support/llm-env.ts';
import { LlmServer } from '../support/llm-server.ts';
import { eventually, signUp, startStack, type Stack } from '../support/stack.ts';

// A unit of the curator that fails for good (here the release of a caller's sealed keys, which a database outage
// longer than its retries used to fail) is counted, and the org's curator goes on: before, the rejection reached
// nothing that awaited it and failed every workflow task of the run, on every replay.
const llm = new LlmServer();
let stack: Stack;
beforeAll(async () => {
  await llm.start();
  stack = await startStack({ worker: false, env: { WRITE_RATE_LIMIT_PER_MINUTE: '0', ...llmEnv(llm) } });
  stack.worker = await stack.startWorker({
    releaseLlmKeys: async () => {
      throw ApplicationFailure.nonRetryable('the sealed keys could not be released', 'KeysNotReleased');
    },
  });
});
afterAll(async () => {
  await stack?.close();
  await llm.close();
});

describe("the curator's units", () => {
  it('go on after one fails for good, and the backlog says which and why', { timeout: 90_000 }, async () => {
    const free = await signUp(stack.api);
    const save = async (content: string) => {
      const res = await stack.api.post('/api/memories', {
        token: free.token,
        body: { content, metadata: { summarize: true, byok_primary_key: 'sk-ant-caller-own' } },
      });
      expect(res.status).toBe(201);
      return res.body.id as string;
    };
    const handle = stack.temporal.workflow.getHandle(curatorWorkflowId(free.org.id));
    const first = await save('First note. It asks for a synopsis with the caller’s own key.');
    const failed = await eventually(async () => {
      const backlog = await handle.query(backlogQuery).catch(() => null);
      return backlog && backlog.totals.unitFailures > 0 && backlog;
    }, 60_000);
    expect(failed.lastFailure).toMatch(/^enrichment: .*the sealed keys could not be released/);
    expect(failed.recent.map((r) => r.memoryId)).not.toContain(first);

    const second = await save('Second note. The curator still runs its enrichments.');
    const after = await eventually(async () => {
      const backlog = await handle.query(backlogQuery).catch(() => null);
      return backlog?.totals.unitFailures === 2 && backlog;
    }, 60_000);
    // The second enrichment ran (its synopsis is stored) before its own release failed the same way.
    const memory = (await stack.api.get(`/api/memories/${second}`, { token: free.token })).body;
    expect(memory.metadata.synopsis).toBe('Second note.');
    expect(after.lastFailure).toMatch(/^enrichment: /);
    expect((await handle.describe()).status.name).toBe('RUNNING');
  });
});
