import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { memoryRecord } from '../../domain/store/model.ts';
import { epochMs, wireOf } from '../../domain/wire.ts';

const step = z.object({ step_no: z.number(), note: z.string().optional() });
const shape = z.object({
  id: z.string(),
  display_name: z.string(),
  memory_a_id: z.string(),
  archived_at: epochMs.nullable(),
  run_id: z.string().optional(),
  steps: z.array(step),
  first_step: step.nullable(),
  metadata: z.record(z.string(), z.unknown()),
});
const json = wireOf(shape);
const view = { id: '1', displayName: 'Ada', memoryAId: 'm', archivedAt: null, steps: [], firstStep: null, metadata: {} };

describe('wireOf', () => {
  it("fills the schema's snake_case keys, in its order, from the view's camelCase ones, and nothing else", () => {
    const out = json({
      memoryAId: 'm',
      displayName: 'Ada',
      id: '1',
      archivedAt: 5,
      runId: 'r',
      steps: [],
      firstStep: null,
      metadata: {},
      orgId: 'not in the schema',
    } as never);
    expect(JSON.stringify(out)).toBe(
      '{"id":"1","display_name":"Ada","memory_a_id":"m","archived_at":5,"run_id":"r","steps":[],"first_step":null,"metadata":{}}',
    );
  });

  it('leaves out an optional key the view holds null or undefined for, and gives null for a key that may not be left out', () => {
    const out = json({ ...view, archivedAt: undefined, runId: null });
    expect(out).toStrictEqual({
      id: '1',
      display_name: 'Ada',
      memory_a_id: 'm',
      archived_at: null,
      steps: [],
      first_step: null,
      metadata: {},
    });
  });

  it('fills nested objects and arrays of objects by their schemas, and takes records as they are', () => {
    const out = json({
      ...view,
      steps: [
        { stepNo: 1, note: null },
        { stepNo: 2, note: 'n' },
      ],
      firstStep: { stepNo: 1 },
      metadata: { someKey: { deepKey: 1 } },
    });
    expect(out.steps).toStrictEqual([{ step_no: 1 }, { step_no: 2, note: 'n' }]);
    expect(out.first_step).toStrictEqual({ step_no: 1 });
    expect(out.metadata).toStrictEqual({ someKey: { deepKey: 1 } });
  });

  it("gives a memory's JSON as the API, webhooks and exports show it: scopes not set and superseded_by left out", () => {
    const view = {
      id: 'a',
      content: 'c',
      namespace: 'default',
      tags: ['t'],
      source: 'api',
      sourceRef: null,
      metadata: {},
      createdAt: 1,
      updatedAt: 2,
      occurredAt: 3,
      userId: 'u',
      agentId: null,
      runId: null,
    };
    expect(memoryRecord(view)).toStrictEqual({
      id: 'a',
      content: 'c',
      namespace: 'default',
      tags: ['t'],
      source: 'api',
      source_ref: null,
      metadata: {},
      created_at: 1,
      updated_at: 2,
      occurred_at: 3,
      user_id: 'u',
    });
  });
});
