import { AppError, invalid } from '../errors.ts';
import { redactOffThread } from './redaction/off-thread.ts';
import { BYOK_KEYS, byteLength, MAX_CONTENT_BYTES, SERVER_METADATA_KEYS } from './limits.ts';
import type { Metadata } from '../store/model.ts';

export interface PreparedContent {
  content: string;
  bytes: number;
  redactedCount: number;
  redactedKinds: string[];
}

// Size is judged on what the caller sent; secrets are redacted before anything is stored, and before any
// transaction opens (a long text off the event loop: off-thread.ts).
export async function prepareContent(raw: string, orgId: string): Promise<PreparedContent> {
  const received = byteLength(raw);
  if (received > MAX_CONTENT_BYTES) {
    throw new AppError('too_large', 'memory_too_large', `content is limited to ${MAX_CONTENT_BYTES} bytes of UTF-8`, {
      max_bytes: MAX_CONTENT_BYTES,
      received_bytes: received,
    });
  }
  if (raw.trim() === '') throw invalid('content required', 'content must be a non-empty string');
  const redaction = await redactOffThread(raw, orgId);
  return { content: redaction.text, bytes: byteLength(redaction.text), redactedCount: redaction.count, redactedKinds: redaction.kinds };
}

// What a memory occupies in its org's storage quota: its content and, when it has any, its metadata's JSON.
export function storedBytes(contentBytes: number, metadata: Metadata): number {
  return Object.keys(metadata).length === 0 ? contentBytes : contentBytes + byteLength(JSON.stringify(metadata));
}

// Drops what a caller may not store: BYOK keys (used for the call only) and server-owned keys.
export function callerMetadata(input: Metadata | undefined): Metadata {
  const out: Metadata = { ...input };
  for (const key of [...BYOK_KEYS, ...SERVER_METADATA_KEYS]) delete out[key];
  return out;
}

// The redaction markers describe the current content, so they are replaced whenever content is.
export function withRedaction(metadata: Metadata, prepared: PreparedContent): Metadata {
  const out: Metadata = { ...metadata };
  delete out.redacted_count;
  delete out.redacted_kinds;
  if (prepared.redactedCount > 0) {
    out.redacted_count = prepared.redactedCount;
    out.redacted_kinds = prepared.redactedKinds;
  }
  return out;
}
