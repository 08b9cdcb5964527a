// The OpenAPI document's longer prose for the routes of api/chat/, kept out of the route definitions.
import { CHAT_AUTO_TITLE_CHARS, DEFAULT_CHAT_TITLE } from '../../domain/chat/sessions.ts';

export const postChat =
  'Puts the top 8 memories by BM25 for the last user message (of one project when namespace is given) and up to ' +
  '4 runbooks whose trigger phrases that message contains (best success ratio first) into the prompt. citations ' +
  'lists what the reply was grounded on. With session_id, the last user message and the reply are appended to ' +
  "that session. Needs a paid plan or a BYOK key; via is `primary`, `alternate` (the server's default provider " +
  'failed and its alternate answered) or `byok`. Counts toward the write rate limit.';

export const postChatSessions =
  `Without a title the session is called "${DEFAULT_CHAT_TITLE}" until its first user message names it (first ` +
  `${CHAT_AUTO_TITLE_CHARS} characters, on one line).`;
