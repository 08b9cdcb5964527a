import proto from '@temporalio/proto';
import { Worker } from '@temporalio/worker';
import { readdir, readFile } from 'node:fs/promises';
import { describe, expect, inject, it } from 'vitest';
import { loadConfig } from '../../infra/config.ts';
import { dataConverter } from '../../temporal/data-converter.ts';
import { REPLAY_CODEC_KEYS } from '../support/histories.ts';

// Runs recorded before a change of workflow code must replay on the code of today: a command in another order, a
// patch taken away too early or a handler that fails on replay shows here, not in production. The histories are
// recorded with test/histories/record.test.ts (they hold saves, edits, enrichments with the server's and a caller's
// key, folds and handovers).
const DIR = new URL('../fixtures/histories/', import.meta.url);
const codecKeys = loadConfig({ TEMPORAL_CODEC_KEYS: REPLAY_CODEC_KEYS, SERVICE_MODE: 'local' }).codecKeys;

describe('recorded workflow histories', () => {
  it('replay on the workflow code of today', { timeout: 120_000 }, async () => {
    const files = (await readdir(DIR)).filter((f) => f.endsWith('.binpb')).sort();
    expect(files.length).toBeGreaterThan(2);
    const histories = await Promise.all(
      files.map(async (file) => ({
        workflowId: file,
        history: proto.temporal.api.history.v1.History.decode(await readFile(new URL(file, DIR))),
      })),
    );
    const results = Worker.runReplayHistories(
      { workflowBundle: { codePath: inject('workflowBundlePath') }, dataConverter: dataConverter(codecKeys) },
      histories,
    );
    let replayed = 0;
    for await (const result of results) {
      expect(result.error, result.workflowId).toBeUndefined();
      replayed++;
    }
    expect(replayed).toBe(files.length);
  });
});
