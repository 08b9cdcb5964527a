import type { MigrationObject } from '@mikro-orm/core';
import { Migration0001Foundation } from './0001_foundation.ts';
import { Migration0002Memories } from './0002_memories.ts';
import { Migration0003Entities } from './0003_entities.ts';
import { Migration0004PasswordResets } from './0004_password_resets.ts';
import { Migration0005Identities } from './0005_identities.ts';
import { Migration0006Webhooks } from './0006_webhooks.ts';
import { Migration0007WebhookDeliveries } from './0007_webhook_deliveries.ts';
import { Migration0008Exports } from './0008_exports.ts';
import { Migration0009Billing } from './0009_billing.ts';
import { Migration0010Intelligence } from './0010_intelligence.ts';
import { Migration0011Embeddings } from './0011_embeddings.ts';
import { Migration0012OutboxLeases } from './0012_outbox_leases.ts';
import { Migration0013TenantKeys } from './0013_tenant_keys.ts';
import { Migration0014OutboxTraceContext } from './0014_outbox_trace_context.ts';
import { Migration0015LexicalBlocks } from './0015_lexical_blocks.ts';
import { Migration0016LexicalStaged } from './0016_lexical_staged.ts';
import { Migration0017EmbeddingsHalfvecIndex } from './0017_embeddings_halfvec_index.ts';
import { Migration0018VectorCounters } from './0018_vector_counters.ts';
import { Migration0019OwnVectorIndexes } from './0019_own_vector_indexes.ts';
import { Migration0020ThreadContext } from './0020_thread_context.ts';
import { Migration0021Passages } from './0021_passages.ts';

// Applied in this order; append new migrations, never edit one that has shipped.
export const migrations: MigrationObject[] = [
  { name: '0001_foundation', class: Migration0001Foundation },
  { name: '0002_memories', class: Migration0002Memories },
  { name: '0003_entities', class: Migration0003Entities },
  { name: '0004_password_resets', class: Migration0004PasswordResets },
  { name: '0005_identities', class: Migration0005Identities },
  { name: '0006_webhooks', class: Migration0006Webhooks },
  { name: '0007_webhook_deliveries', class: Migration0007WebhookDeliveries },
  { name: '0008_exports', class: Migration0008Exports },
  { name: '0009_billing', class: Migration0009Billing },
  { name: '0010_intelligence', class: Migration0010Intelligence },
  { name: '0011_embeddings', class: Migration0011Embeddings },
  { name: '0012_outbox_leases', class: Migration0012OutboxLeases },
  { name: '0013_tenant_keys', class: Migration0013TenantKeys },
  { name: '0014_outbox_trace_context', class: Migration0014OutboxTraceContext },
  { name: '0015_lexical_blocks', class: Migration0015LexicalBlocks },
  { name: '0016_lexical_staged', class: Migration0016LexicalStaged },
  { name: '0017_embeddings_halfvec_index', class: Migration0017EmbeddingsHalfvecIndex },
  { name: '0018_vector_counters', class: Migration0018VectorCounters },
  { name: '0019_own_vector_indexes', class: Migration0019OwnVectorIndexes },
  { name: '0020_thread_context', class: Migration0020ThreadContext },
  { name: '0021_passages', class: Migration0021Passages },
];
