import { describe, expect, it } from 'vitest';
import type { EnrichmentArgs } from '../../domain/store/curate.ts';
import { emptyReport, reported, tasksLeft } from '../../workflows/curator/enrichment.ts';
import { foldPauses, foldReady, foldStarts } from '../../workflows/curator/fold.ts';
import { ends, handOverDue, nextRun, settled } from '../../workflows/curator/handover.ts';
import {
  backfillAfter,
  batchDone,
  batchStarts,
  firstLaneReady,
  firstLaneTakes,
  holdsBack,
  otherLaneReady,
} from '../../workflows/curator/lanes.ts';
import {
  backlogOf,
  busy,
  counted,
  received,
  startRun,
  unitFailed,
  type CuratorState,
  type CuratorTotals,
} from '../../workflows/curator/run.ts';
import { CURATOR_TUNING, type CuratorTuning } from '../../workflows/curator/tuning.ts';

// The curator's loops decide with plain functions of the run's state (workflows/curator/); the workflow only wires
// them to timers and activities, which test/integration/curator-timers.test.ts covers in workflow time.
const tuning: CuratorTuning = {
  ...CURATOR_TUNING,
  batch: 3,
  maxPending: 10,
  maxEnrichments: 2,
  recentReports: 2,
  burstPerSecond: 100,
  burstWindowMs: 2_000,
  burstPauseMs: 6_000,
  burstLookAgainMs: 2_000,
  historyEvents: 100,
};
const enrichment = (memoryId: string, tasks: EnrichmentArgs['tasks'] = ['synopsis', 'facts']): EnrichmentArgs => ({
  orgId: 'org',
  memoryId,
  tasks,
  contentHash: 'h',
  escrowId: null,
});
// A run with the test's tuning, past the fold a run starts with.
const running = (state: Omit<CuratorState, 'orgId'> = {}) => {
  const run = startRun({ orgId: 'org', tuning, ...state });
  run.unfolded = false;
  return run;
};
const history = (historyLength: number, continueAsNewSuggested = false) => ({ historyLength, continueAsNewSuggested });

describe("a curator run's state", () => {
  it("starts from what the run before carried, with counters added since at zero, and the code's tuning when none came", () => {
    const carried = { embedded: 5, reused: 1, current: 2, refused: 0, enriched: 3, enrichSkipped: 0, enrichFailed: 1, enrichDropped: 0 };
    const run = startRun({ orgId: 'org', pending: ['a', 'b'], backfill: { cursor: 'm' }, totals: carried as CuratorTotals });
    expect(run.tuning).toBe(CURATOR_TUNING);
    expect([...run.pending]).toEqual(['a', 'b']);
    expect(run.backfill).toEqual({ cursor: 'm' });
    expect(run.totals).toEqual({ ...carried, unitFailures: 0 });
    // A first run folds whatever was staged before it.
    expect(run.unfolded).toBe(true);
    expect(busy(startRun({ orgId: 'org' }))).toBe(true);
    expect(startRun({ orgId: 'org', tuning }).tuning).toBe(tuning);
  });

  it('takes ids and enrichments from a signal, drops enrichments past the bound, and makes a fold due', () => {
    const run = running();
    received(run, { ids: ['a', 'b'], backfill: false, enrich: [enrichment('a'), enrichment('b'), enrichment('c')] }, 0);
    expect([...run.pending]).toEqual(['a', 'b']);
    expect(run.enrichments.map((e) => e.memoryId)).toEqual(['a', 'b']);
    expect(run.totals.enrichDropped).toBe(1);
    expect(run.unfolded).toBe(true);
    expect(backlogOf(run)).toMatchObject({ pending: 2, backfilling: false, backfillCursor: null, enrichments: 2, lastFailure: null });
  });

  it('drops the ids waiting for a backfill from the start when asked, or when more than maxPending wait', () => {
    const asked = running({ backfill: { cursor: 'm' } });
    received(asked, { ids: ['a'], backfill: true, enrich: [] }, 0);
    expect(asked.pending.size).toBe(0);
    expect(asked.backfill).toEqual({ cursor: null });
    const overflowing = running();
    received(overflowing, { ids: Array.from({ length: 10 }, (_, i) => `m${i}`), backfill: false, enrich: [] }, 0);
    expect(overflowing.backfill).toBeNull();
    received(overflowing, { ids: ['m10'], backfill: false, enrich: [] }, 1_000);
    expect(overflowing.pending.size).toBe(0);
    expect(backlogOf(overflowing)).toMatchObject({ pending: 0, backfilling: true, backfillCursor: null });
  });

  it('is busy while anything waits or runs, and idle otherwise', () => {
    const run = running();
    expect(busy(run)).toBe(false);
    run.inFlight = 1;
    expect(busy(run)).toBe(true);
    run.inFlight = 0;
    run.enrichments.push(enrichment('a'));
    expect(busy(run)).toBe(true);
  });

  it('counts a unit that failed for good and shows the latest; the backlog answers with copies', () => {
    const run = running();
    expect(unitFailed(run, 'fold', 'database down')).toBe('fold: database down');
    unitFailed(run, 'embedding', 'model down');
    counted(run.totals, { embedded: 3, reused: 1, current: 2, refused: 1 });
    const backlog = backlogOf(run);
    expect(backlog.lastFailure).toBe('embedding: model down');
    expect(backlog.totals).toMatchObject({ unitFailures: 2, embedded: 3, reused: 1, current: 2, refused: 1 });
    backlog.totals.embedded = 0;
    expect(run.totals.embedded).toBe(3);
  });
});

describe('the embedding lanes', () => {
  it('the first lane takes saved memories before the backfill, and nothing once the run hands over', () => {
    const run = running({ backfill: { cursor: 'm' } });
    expect(firstLaneReady(run)).toBe(true);
    // The page's walking is the run's backfill itself, so that a backfill requested again meanwhile is told apart.
    const page = firstLaneTakes(run);
    expect(page?.kind === 'page' && page.walking).toBe(run.backfill);
    run.pending.add('a');
    expect(firstLaneTakes(run)).toEqual({ kind: 'batch' });
    run.draining = true;
    expect(firstLaneTakes(run)).toBeNull();
    expect(firstLaneReady(running())).toBe(false);
  });

  it('the other lanes take saved memories only, and none during a burst', () => {
    const run = running({ backfill: { cursor: null } });
    expect(otherLaneReady(run, 0)).toBe(false);
    received(run, { ids: ['a'], backfill: false, enrich: [] }, 0);
    expect(otherLaneReady(run, 0)).toBe(true);
    // 500 ids more within a second: more than the window allows.
    for (let t = 250; t <= 1_000; t += 250) run.bursts.arrived(t, 125);
    expect(otherLaneReady(run, 1_000)).toBe(false);
    expect(otherLaneReady(run, 1_000 + tuning.burstWindowMs + 1)).toBe(true);
  });

  it('the first lane holds back during a burst for at most burstPauseMs, and not once the burst ends or the run hands over', () => {
    const run = running();
    run.bursts.arrived(0, 500);
    const looks: number[] = [];
    for (let waited = 0; holdsBack(run, waited, 0); waited += tuning.burstLookAgainMs) looks.push(waited);
    expect(looks).toEqual([0, 2_000, 4_000]);
    expect(holdsBack(run, 0, tuning.burstWindowMs + 1)).toBe(false);
    run.bursts.arrived(10_000, 500);
    expect(holdsBack(run, 0, 10_000)).toBe(true);
    run.draining = true;
    expect(holdsBack(run, 0, 10_000)).toBe(false);
  });

  it('a batch takes the newest ids and is held as in flight until done', () => {
    const run = running({ pending: ['a', 'b', 'c', 'd'] });
    const ids = batchStarts(run);
    expect(ids).toEqual(['d', 'c', 'b']);
    expect([...run.pending]).toEqual(['a']);
    expect(settled(run)).toBe(false);
    expect(nextRun(run).pending).toEqual(['a', 'd', 'c', 'b']);
    batchDone(run, ids);
    expect(settled(run)).toBe(true);
  });

  it('a backfill page moves the scan on, ends it after the last page, and leaves one requested again meanwhile', () => {
    const walking = { cursor: null };
    expect(backfillAfter(walking, walking, 'm')).toEqual({ cursor: 'm' });
    expect(backfillAfter(walking, walking, null)).toBeNull();
    const again = { cursor: null };
    expect(backfillAfter(again, walking, 'm')).toBe(again);
  });
});

describe('the enrichment loop', () => {
  it('tells which tasks are left as each starts', () => {
    const args = enrichment('a', ['synopsis', 'entities', 'facts']);
    expect(tasksLeft(args, 1)).toEqual({ ...args, tasks: ['entities', 'facts'] });
    expect(tasksLeft(args, 3).tasks).toEqual([]);
    expect(args.tasks).toHaveLength(3);
    expect(emptyReport(args)).toEqual({ memoryId: 'a', stored: [], skipped: [], failed: [] });
  });

  it('counts each report and keeps the latest recentReports', () => {
    const run = running();
    for (const id of ['a', 'b', 'c']) {
      reported(run, { memoryId: id, stored: ['synopsis', 'facts'], skipped: ['entities'], failed: [{ task: 'extract', error: 'x' }] });
    }
    expect(run.recent.map((r) => r.memoryId)).toEqual(['b', 'c']);
    expect(run.totals).toMatchObject({ enriched: 6, enrichSkipped: 3, enrichFailed: 3 });
  });
});

describe('the fold loop', () => {
  it('folds after a signal, at once again while more is staged, and otherwise pauses', () => {
    const run = running();
    expect(foldReady(run)).toBe(false);
    received(run, { ids: ['a'], backfill: false, enrich: [] }, 0);
    expect(foldReady(run)).toBe(true);
    foldStarts(run);
    expect(foldReady(run)).toBe(false);
    expect(settled(run)).toBe(false);
    expect(foldPauses(run, true)).toBe(false);
    expect(foldReady(run)).toBe(true);
    foldStarts(run);
    expect(foldPauses(run, false)).toBe(true);
    expect(foldReady(run)).toBe(false);
  });
});

describe('the handover', () => {
  it('is due at historyEvents or when Temporal suggests it', () => {
    expect(handOverDue(history(99), tuning)).toBe(false);
    expect(handOverDue(history(100), tuning)).toBe(true);
    expect(handOverDue(history(10, true), tuning)).toBe(true);
  });

  it('waits for a backfill page in flight but not for an enrichment', () => {
    const run = running();
    run.paging = true;
    expect(settled(run)).toBe(false);
    run.paging = false;
    run.enrichingNow = enrichment('a');
    expect(settled(run)).toBe(true);
  });

  it('ends a run with nothing left and no handover due; otherwise hands over', () => {
    const run = running();
    expect(ends(run, history(10))).toBe(true);
    expect(ends(run, history(100))).toBe(false);
    run.pending.add('a');
    expect(ends(run, history(10))).toBe(false);
  });

  it("carries the enrichment in flight with its tasks left first, the backfill where it is, and the code's tuning", () => {
    const run = running({ backfill: { cursor: 'm' }, recent: [emptyReport(enrichment('r'))] });
    received(run, { ids: ['a'], backfill: false, enrich: [enrichment('b'), enrichment('c')] }, 0);
    const first = run.enrichments.shift()!;
    run.enrichingNow = tasksLeft(first, 1);
    counted(run.totals, { embedded: 1, reused: 0, current: 0, refused: 0 });
    const next = nextRun(run);
    expect(next).toEqual({
      orgId: 'org',
      pending: ['a'],
      backfill: { cursor: 'm' },
      enrichments: [{ ...first, tasks: ['facts'] }, enrichment('c')],
      totals: run.totals,
      recent: run.recent,
      tuning: CURATOR_TUNING,
    });
    expect(next.tuning).not.toBe(run.tuning);
    run.enrichingNow = null;
    expect(nextRun(run).enrichments).toEqual([enrichment('c')]);
  });
});
