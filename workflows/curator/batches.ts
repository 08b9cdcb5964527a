// Which saved memories a batch embeds, and what a handover carries: plain functions of the curator's state.

// The newest saves first: a memory saved while the org's backlog is embedded (after an import, say) is found by
// meaning at once, not after the whole backlog; the backlog takes as long either way. Takes them out of `pending`.
export function takeNewest(pending: Set<string>, batch: number): string[] {
  const ids = [...pending].slice(-batch).reverse();
  for (const id of ids) pending.delete(id);
  return ids;
}

// What the next run is to embed: the ids waiting, then the batches still in flight, which it thus takes first.
export function carriedPending(pending: Iterable<string>, inFlight: Iterable<string[]>): string[] {
  return [...new Set([...pending, ...[...inFlight].flat()])];
}
