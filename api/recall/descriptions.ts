// The OpenAPI document's longer prose for the routes of api/recall/, kept out of the route definitions.

export const postRecall =
  'logged counts recorded rows (one per distinct id); skipped counts the other ids sent: duplicates and ids that ' +
  'could not be linked (deleted, another org).';
