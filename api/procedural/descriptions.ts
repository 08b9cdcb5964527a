// The OpenAPI document's longer prose for the routes of api/procedural/, kept out of the route definitions.

export const postProceduralId =
  'Increments success_count or failure_count and sets last_used_at; updated_at is unchanged. The success ratio ' +
  'ranks runbook suggestions.';
