export interface Summary {
  count: number;
  p50: number;
  p95: number;
  p99: number;
  mean: number;
  max: number;
}

export function summarize(samplesMs: number[]): Summary {
  const sorted = [...samplesMs].sort((a, b) => a - b);
  const at = (q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? NaN;
  const round = (n: number) => Math.round(n * 10) / 10;
  return {
    count: sorted.length,
    p50: round(at(0.5)),
    p95: round(at(0.95)),
    p99: round(at(0.99)),
    mean: round(sorted.reduce((s, x) => s + x, 0) / sorted.length),
    max: round(sorted[sorted.length - 1] ?? NaN),
  };
}

// Runs `task` with `concurrency` workers until `total` tasks ran; returns each task's latency and the rate.
export async function closedLoop(
  concurrency: number,
  total: number,
  task: (i: number) => Promise<void>,
): Promise<{ latencies: number[]; perSecond: number; seconds: number }> {
  const latencies: number[] = [];
  let next = 0;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      for (let i = next++; i < total; i = next++) {
        const t = performance.now();
        await task(i);
        latencies.push(performance.now() - t);
      }
    }),
  );
  const seconds = (performance.now() - started) / 1000;
  return { latencies, perSecond: Math.round(total / seconds), seconds: Math.round(seconds * 10) / 10 };
}
