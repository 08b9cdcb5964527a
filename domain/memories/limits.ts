// Limits of section 8 and decisions.md, in one place.
export const MAX_CONTENT_BYTES = 262_144; // 256 KiB of UTF-8
export const FREE_MEMORY_QUOTA = 500; // memories ever created by a free org; deleting gives none back
export const FREE_STORAGE_QUOTA_BYTES = 50 * 1024 * 1024; // bytes of content and metadata a free org holds now
export const BATCH_UPDATE_MAX = 200;
export const BATCH_CREATE_MAX = 500;
export const BULK_SEARCH_MAX_QUERIES = 25;
export const SEARCH_K_MAX = 50;
export const LIST_LIMIT_MAX = 500;
export const LIST_OFFSET_MAX = 100_000;
// In an org holding more memories than this, a filtered list's `total` is reported as null rather than counted
// (the contract's "count skipped for a very large org"): counting 300,000 matches of a metadata filter took
// 90 ms at 1,000,000 memories, for a page that took 0.1 ms.
export const LIST_COUNT_MAX_ORG_MEMORIES = 100_000;

// A memory's own metadata (the caller's keys, the server's aside) as JSON, on a save and after each merge.
export const MAX_METADATA_JSON = 65_536;
// metadata.history keeps the latest content edits only.
export const HISTORY_ENTRIES_KEPT = 100;
// Audit events of one memory a history page holds, at most.
export const HISTORY_PAGE_MAX = 500;

// Keys of metadata the server owns: a caller's value for them is ignored.
export const SERVER_METADATA_KEYS = ['history', 'redacted_count', 'redacted_kinds', 'synopsis', 'facts'] as const;
// The caller's own LLM keys: used for the call that carries them, never stored.
export const BYOK_KEYS = ['byok_primary_key', 'byok_alternate_key'] as const;

export const byteLength = (text: string): number => Buffer.byteLength(text, 'utf8');
