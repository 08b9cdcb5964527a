import { DefaultLogger, Runtime, type LogLevel } from '@temporalio/worker';
import type { Logger } from 'pino';

const LEVELS: Record<string, LogLevel> = { trace: 'TRACE', debug: 'DEBUG', info: 'INFO', warn: 'WARN', error: 'ERROR', fatal: 'ERROR', silent: 'ERROR' };

// Routes the SDK's own log lines (worker state, activity failures) into our structured log. The SDK
// allows one runtime per process, so a second call is a no-op.
let installed = false;
export function installTemporalRuntime(logger: Logger, level: string): void {
  if (installed) return;
  installed = true;
  const sdkLogger = new DefaultLogger(LEVELS[level] ?? 'INFO', (entry) => {
    const method = entry.level === 'TRACE' ? 'trace' : entry.level === 'DEBUG' ? 'debug' : entry.level === 'INFO' ? 'info' : entry.level === 'WARN' ? 'warn' : 'error';
    logger[method]({ temporal: entry.meta }, entry.message);
  });
  Runtime.install({ logger: sdkLogger });
}
