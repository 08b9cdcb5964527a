// The OpenAPI document's longer prose for the routes of api/consolidate/, kept out of the route definitions.

export const postConsolidate =
  'detect (paid plan): scans the most recently updated 2,000 memories (of one project when namespace is given) ' +
  'for lexical duplicates (term-set Jaccard >= threshold), stale memories (an older memory whose terms a newer, ' +
  'longer one contains >= threshold) and, when an LLM provider is configured, contradictions (topic overlap >= ' +
  'threshold/2 judged by the model, up to 20 pairs per run); answers { scanned, proposalsCreated, alreadyKnown ' +
  '}. review: decision approved or rejected (changeable until merged) answers the proposal. merge (approved ' +
  'proposals; paid plan or a BYOK key): an LLM writes one memory from both, tagged merged-from-consolidation, ' +
  'and both originals are superseded (left out of search and of lists unless include_superseded); repeating the ' +
  'request for a merged proposal answers the same result.';

export const postConsolidate503 =
  '`llm_unavailable` or `llm_not_configured`; `still_running` when a detect or merge takes longer than the ' +
  'request waits (WORKFLOW_WAIT_MS; asking again waits for the same run) and `temporal_unavailable`, both with ' +
  'Retry-After';
