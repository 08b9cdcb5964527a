// The OpenAPI document's longer prose for the routes of api/entities/, kept out of the route definitions.

export const getEntities =
  'Ordered by mention_count, then last_seen_at, both descending. q matches a case-insensitive substring of ' +
  'display_name or of any alias.';
