// The OpenAPI document's longer prose for the routes of api/billing/, kept out of the route definitions.

export const postBillingWebhook =
  'Each handled event id is recorded once and reconciled by the `billing-event-<event id>` workflow. Answers `{ ' +
  'ok: true, processed: true }` the first time, `{ ok: true, duplicate: true }` after, `{ ok: true, recorded: ' +
  'false }` for other event types.';
