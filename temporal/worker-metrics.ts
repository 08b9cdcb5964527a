import type { MikroORM } from '@mikro-orm/postgresql';
import { embeddingBacklog } from '../domain/embeddings/store.ts';
import { outboxStats } from '../domain/outbox/stats.ts';
import { watchEmbeddingBacklog, watchOutboxAge, watchOutboxDepth, watchOutboxFailed, watchPool } from '../infra/metrics.ts';

// One query answers several gauges of a scrape, and a costly one is not repeated at every scrape.
function cached<T>(maxAgeMs: number, read: () => Promise<T>): () => Promise<T> {
  let last: { at: number; value: Promise<T> } | undefined;
  return () => {
    if (!last || performance.now() - last.at > maxAgeMs) {
      const value = read();
      last = { at: performance.now(), value };
      value.catch(() => (last = undefined));
    }
    return last.value;
  };
}

// The gauges the worker answers for the whole service: the outbox its relay drains, and the embedding
// backlog its curators work off (counting it reads every vector's row, so at most every 30 s).
export async function watchWorkerState(orm: MikroORM, model: string | null): Promise<() => void> {
  const outbox = cached(1_000, () => outboxStats(orm.em.fork()));
  const stops = [
    watchPool(await orm.em.getConnection().getNativeClient()),
    watchOutboxDepth(async () => (await outbox()).pending),
    watchOutboxAge(async () => (await outbox()).oldestPendingSeconds),
    watchOutboxFailed(async () => (await outbox()).failed),
  ];
  if (model) {
    const backlog = cached(30_000, () => embeddingBacklog(orm.em.fork(), model));
    stops.push(watchEmbeddingBacklog(backlog));
  }
  return () => stops.forEach((stop) => stop());
}
