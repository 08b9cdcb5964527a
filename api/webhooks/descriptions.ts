// The OpenAPI document's longer prose for the routes of api/webhooks/, kept out of the route definitions.

export const postWebhooks =
  'Targets resolving to loopback, private, link-local or other non-public addresses are refused unless ' + 'WEBHOOK_ALLOW_PRIVATE_TARGETS.';
