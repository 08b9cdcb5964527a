import { DefaultLogger, MetricsBuffer, Runtime, type LogLevel } from '@temporalio/worker';
import type { Logger } from 'pino';
import { Counter, Gauge, Histogram } from 'prom-client';
import { onScrape, registry } from '../infra/metrics.ts';

const LEVELS: Record<string, LogLevel> = {
  trace: 'TRACE',
  debug: 'DEBUG',
  info: 'INFO',
  warn: 'WARN',
  error: 'ERROR',
  fatal: 'ERROR',
  silent: 'ERROR',
};

// The SDK's own metrics (workflow and activity task latencies, pollers, sticky cache, ...) are buffered by
// its core and copied into the process's Prometheus registry, so the worker's /metrics serves them beside
// ours, under their own names (temporal_*).
const buffer = new MetricsBuffer({ maxBufferSize: 50_000, useSecondsForDurations: true });
type Mirror = { labels: Set<string>; apply(labels: Record<string, string>, value: number): void };
const mirrors = new Map<string, Mirror>();

function mirrorOf(name: string, kind: string, help: string, labelNames: string[]): Mirror {
  const labels = new Set(labelNames);
  const common = { name, help: help || name, labelNames, registers: [registry] };
  if (kind === 'histogram') {
    const h = new Histogram(common);
    return { labels, apply: (l, v) => h.observe(l, v) };
  }
  if (kind === 'counter') {
    const c = new Counter(common);
    return { labels, apply: (l, v) => c.inc(l, v) };
  }
  // Gauges carry the value itself; up-down counters a delta.
  const g = new Gauge(common);
  return { labels, apply: kind === 'gauge' ? (l, v) => g.set(l, v) : (l, v) => g.inc(l, v) };
}

// Copies what the core buffered since the last call; each scrape calls it first, and a timer keeps
// the buffer from filling between scrapes.
function drainTemporalMetrics(): void {
  for (const { metric, value, attributes } of buffer.retrieveUpdates()) {
    const labels = Object.fromEntries(Object.entries(attributes).map(([k, v]) => [k, String(v)]));
    let mirror = mirrors.get(metric.name);
    if (!mirror) {
      mirror = mirrorOf(metric.name, metric.kind, metric.description ?? '', Object.keys(labels));
      mirrors.set(metric.name, mirror);
    }
    // A label the first update of this metric did not have cannot be added to its series: it is left out.
    for (const key of Object.keys(labels)) if (!mirror.labels.has(key)) delete labels[key];
    mirror.apply(labels, value);
  }
}

// Routes the SDK's own log lines (worker state, activity failures) into our structured log. The SDK allows one runtime per process,
// so a second call is a no-op.
let installed = false;
export function installTemporalRuntime(logger: Logger, level: string): void {
  if (installed) return;
  installed = true;
  const sdkLogger = new DefaultLogger(LEVELS[level] ?? 'INFO', (entry) => {
    const method =
      entry.level === 'TRACE'
        ? 'trace'
        : entry.level === 'DEBUG'
          ? 'debug'
          : entry.level === 'INFO'
            ? 'info'
            : entry.level === 'WARN'
              ? 'warn'
              : 'error';
    logger[method]({ temporal: entry.meta }, entry.message);
  });
  Runtime.install({ logger: sdkLogger, telemetryOptions: { metrics: { metricPrefix: 'temporal_', buffer } } });
  onScrape(drainTemporalMetrics);
  setInterval(drainTemporalMetrics, 10_000).unref();
}
