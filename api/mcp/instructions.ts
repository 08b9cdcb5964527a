// The server's `instructions` (MCP's initialize result), over HTTP and stdio alike: when an agent should search and
// when it should save, which the tools' own descriptions do not say.
export const INSTRUCTIONS = `This server is the user's long-term memory, kept across conversations and agents.

Search (search_memories) before answering anything that may depend on what was said or decided before: the user's preferences, circumstances and people; past decisions and their reasons; a project's facts and conventions. Search before asking the user something they may have told you already. An empty answer with min_relevance set means nothing relevant is stored.

Save (add_memory; save_conversation for a conversation's turns) what will still be true and useful later: durable facts about the user, preferences, decisions, project facts, each memory one statement that stands on its own. Do not save chit-chat, greetings, what is true only for the moment, or what is already stored. When something saved changes, update_memory the memory found rather than adding a contradicting one.

Before a procedure, find_runbooks; after following one, record_runbook_outcome.`;
