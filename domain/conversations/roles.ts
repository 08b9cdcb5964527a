// Who says a conversation's message (capture.ts), apart so that request schemas import no store code.
export const MESSAGE_ROLES = ['user', 'assistant', 'system', 'tool'] as const;
export type MessageRole = (typeof MESSAGE_ROLES)[number];
