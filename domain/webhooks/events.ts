// The events an endpoint can subscribe to.
export const WEBHOOK_EVENTS = ['memory.saved', 'memory.updated', 'memory.deleted', 'conversation.extracted'] as const;
export type WebhookEvent = (typeof WEBHOOK_EVENTS)[number];
