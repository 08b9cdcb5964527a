// The OpenAPI document's longer prose for the routes of api/conversations/, kept out of the route definitions.

export const postConversations =
  "Each message becomes a memory of the conversation's thread (GET /api/threads/{conversation_id}): " +
  "metadata.parent_ref is the conversation id, metadata.chunk_index continues the thread's last, metadata.role " +
  '(and name) say who spoke, occurred_at says when, source is `conversation`, and the scopes, project, tags and ' +
  "metadata of the call apply to each. Every memory has a save's semantics (secrets redacted, one memory.saved " +
  'event and one audit row each, searchable by its words at once and by meaning once embedded). All or nothing: ' +
  'a message that cannot be saved fails the call with the status a save would answer, naming the message ' +
  '(`messages.<index>`), and on the free plan a conversation past the quota is refused whole with 402. With an ' +
  '`Idempotency-Key` header a repeat within 24 hours answers the first outcome.';
