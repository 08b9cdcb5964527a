// The OpenAPI document's longer prose for the routes of api/threads/, kept out of the route definitions.

export const getThreads =
  'A thread is the memories sharing `metadata.parent_ref` (a conversation: the conversations API sets it to the ' +
  'conversation id), ' +
  'whatever their number. A memory without `parent_ref` is listed as a thread of its own keyed by its id, unless ' +
  '`solo=exclude`.';
