import proto from '@temporalio/proto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { curatorWorkflowId } from '../../domain/store/curate.ts';
import { query, sql } from '../../domain/sql.ts';
import { backlogQuery } from '../../workflows/memory-curator.ts';
import { REPLAY_CODEC_KEYS } from '../support/histories.ts';
import { llmEnv } from '../support/llm-env.ts';
import { LlmServer } from '../support/llm-server.ts';
import { eventually, signUp, startStack, type SignedUp, type Stack } from '../support/stack.ts';
import { TemporalDevServer } from '../support/temporal-server.ts';

// Records the histories test/integration/workflow-replay.test.ts replays: the curator of a paid org and of a free
// org whose caller brought a key, through saves, edits, enrichments, folds and a few handovers (a Temporal server
// of its own suggests continue-as-new after 60 events). Run with the workflow code whose runs must stay readable:
// RECORD_HISTORIES=1 bash scripts/test.sh --project histories
const provider = new LlmServer();
let dir: string;
let temporal: TemporalDevServer;
let stack: Stack;
let paid: SignedUp;
let free: SignedUp;

beforeAll(async () => {
  await provider.start();
  dir = await mkdtemp(join(tmpdir(), 'memsvc-histories-'));
  temporal = await TemporalDevServer.create(inject('temporalBin'), join(dir, 'temporal.db'), {
    'limit.historyCount.suggestContinueAsNew': 60,
  });
  await temporal.start();
  stack = await startStack({
    env: {
      TEMPORAL_ADDRESS: temporal.address,
      TEMPORAL_CODEC_KEYS: REPLAY_CODEC_KEYS,
      WRITE_RATE_LIMIT_PER_MINUTE: '0',
      ...llmEnv(provider),
      ...provider.embeddingEnv(),
    },
  });
  paid = await signUp(stack.api);
  free = await signUp(stack.api);
  await query(stack.orm.em.fork(), sql`update orgs set plan = 'team' where id = ${paid.org.id}`);
});
afterAll(async () => {
  await stack?.close();
  await temporal?.stop();
  await provider.close();
  await rm(dir, { recursive: true, force: true });
});

const LONG =
  'Grace Hopper and Ada Lovelace reviewed the Kubernetes migration plan with the Acme Corp platform team. ' +
  'They agreed to move the billing service first, keep PostgreSQL as the primary store, and revisit the queue choice in March.';

describe('workflow histories', () => {
  it('records the curators of a paid org and of a free org with a key of its own', { timeout: 180_000 }, async () => {
    for (let round = 0; round < 6; round++) {
      for (let i = 0; i < 8; i++) {
        const res = await stack.api.post('/api/memories', {
          token: paid.token,
          body: { content: `Round ${round} note ${i}: the deploy moved to Thursday ${round * 10 + i}` },
        });
        expect(res.status).toBe(201);
      }
      const enriched = await stack.api.post('/api/memories', {
        token: paid.token,
        body: { content: `${LONG} Round ${round}.`, metadata: { summarize: true } },
      });
      const edited = await stack.api.put(`/api/memories/${enriched.body.id}`, {
        token: paid.token,
        body: { content: `${LONG} Round ${round}, edited.` },
      });
      expect(edited.status).toBe(200);
      const byok = await stack.api.post('/api/memories', {
        token: free.token,
        body: { content: `${LONG} Free round ${round}.`, metadata: { summarize: true, byok_primary_key: 'sk-ant-caller-own' } },
      });
      expect(byok.status).toBe(201);
      await new Promise((r) => setTimeout(r, 1500));
    }
    for (const who of [paid, free]) {
      const handle = stack.temporal.workflow.getHandle(curatorWorkflowId(who.org.id));
      await eventually(async () => {
        const b = await handle.query(backlogQuery).catch(() => null);
        return b && b.pending === 0 && b.enrichments === 0 && !b.backfilling;
      }, 120_000);
    }
    let n = 0;
    for (const [label, who] of [
      ['paid', paid],
      ['free', free],
    ] as const) {
      for await (const run of stack.temporal.workflow.list({ query: `WorkflowId = "${curatorWorkflowId(who.org.id)}"` })) {
        const history = await stack.temporal.workflow.getHandle(run.workflowId, run.runId).fetchHistory();
        const bytes = proto.temporal.api.history.v1.History.encode(history).finish();
        await writeFile(new URL(`../fixtures/histories/memory-curator-${label}-${run.runId}.binpb`, import.meta.url), bytes);
        n++;
      }
    }
    expect(n).toBeGreaterThan(2);
  });
});
