import { describe, expect, it } from 'vitest';
import { efSearch, exactScanMax, firstScan, ORG_SCAN_ROWS, orgRowsAtMost } from '../../domain/search/semantic.ts';

// When a filtered semantic search scores every memory that passes instead of reading the HNSW index: the index
// reads about n / share vectors, the exact scan one per memory passing.
describe('exactScanMax', () => {
  it('scores at least 2,000 memories exactly, whatever the org', () => {
    expect(exactScanMax(10, 0)).toBe(2000);
    expect(exactScanMax(10, 50_000)).toBe(2000);
  });

  it('grows with the square root of the org and of how many are asked for', () => {
    expect(exactScanMax(10, 1_000_000)).toBe(7745);
    expect(exactScanMax(100, 1_000_000)).toBe(24_494);
    expect(exactScanMax(100, 107_000)).toBe(8012);
    expect(exactScanMax(10, 4_000_000)).toBe(2 * 7745 + 1);
  });

  it('keeps an unfiltered search in a large org on the index', () => {
    // Passing = the whole org: far above the bound once the org is past a few thousand memories.
    for (const org of [10_000, 100_000, 1_000_000]) expect(exactScanMax(100, org)).toBeLessThan(org);
  });
});

// How many candidates the HNSW graph search keeps (pgvector's ef_search), set by each index scan for itself.
describe('efSearch', () => {
  it('keeps 64 for a short list', () => {
    expect(efSearch(1)).toBe(64);
    expect(efSearch(10)).toBe(64);
  });

  it('follows a deeper list up to 100, past which iterative scanning goes on', () => {
    expect(efSearch(80)).toBe(80);
    expect(efSearch(100)).toBe(100);
    expect(efSearch(800)).toBe(100);
  });
});

// Which way a search reads its candidates first: an org without an index of its own is scored from its own rows
// while they are few, never through the index it shares with other tenants.
describe('firstScan', () => {
  const org = { exactly: false, wholeOrg: true, ownIndex: false, orgRows: 5_000 };

  it('scores a small org from its rows, filtered or not, whatever the share of it the filters pass', () => {
    expect(firstScan(org)).toBe('org');
    expect(firstScan({ ...org, wholeOrg: false })).toBe('org');
    expect(firstScan({ ...org, orgRows: ORG_SCAN_ROWS })).toBe('org');
    // Few memories passing are scored one by one, as before.
    expect(firstScan({ ...org, wholeOrg: false, exactly: true })).toBe('exact');
  });

  it("reads an index past the bound: the shared one, or the org's own once built", () => {
    expect(firstScan({ ...org, orgRows: ORG_SCAN_ROWS + 1 })).toBe('shared');
    expect(firstScan({ ...org, ownIndex: true, orgRows: 100_000 })).toBe('own');
    expect(firstScan({ ...org, ownIndex: true, orgRows: 5_000 })).toBe('own');
    expect(firstScan({ ...org, ownIndex: true, wholeOrg: true, exactly: true })).toBe('org');
  });

  it("counts a long memory's passages in the org's rows", () => {
    expect(orgRowsAtMost(1_000, 0)).toBe(1_000);
    // 1,000 memories of 9,000 bytes: their passages are about 12 rows each.
    expect(orgRowsAtMost(1_000, 9_000_000)).toBe(13_000);
    expect(firstScan({ ...org, orgRows: orgRowsAtMost(2_000, 20_000_000) })).toBe('shared');
  });
});
