// What the benchmarks read of the machine's processes from /proc: CPU time and memory.
import { readdirSync, readFileSync } from 'node:fs';

// CPU seconds (user + system) from a /proc/<pid>/stat line, the process's own and those of the children it has
// reaped: PostgreSQL's postmaster reaps its backends, so a backend that exits (a pool closing an idle connection,
// an autovacuum worker) still counts, instead of taking its CPU out of the sum. The fields are counted after the
// command's name, which may hold spaces.
const statSeconds = (stat: string): number => {
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12]) + Number(fields[13]) + Number(fields[14])) / 100;
};

// CPU seconds a process (and the children it has reaped) has used so far.
export function cpuSeconds(pid: string | undefined): number {
  if (!pid) return NaN;
  return statSeconds(readFileSync(`/proc/${pid}/stat`, 'utf8'));
}

// CPU seconds used so far by every process on the machine, summed by kind: the stack's worker and API (and the API's
// main thread alone), PostgreSQL, Temporal, this client, and everything else.
export function cpuByKind(): Record<string, number> {
  const kinds: Record<string, number> = {};
  for (const pid of readdirSync('/proc').filter((entry) => /^\d+$/.test(entry))) {
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
      const command = readFileSync(`/proc/${pid}/cmdline`, 'utf8');
      const name = stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')'));
      const kind = command.includes('worker-main')
        ? 'worker'
        : command.includes('api/main')
          ? 'api'
          : name.startsWith('postgres')
            ? 'postgres'
            : name.startsWith('temporal')
              ? 'temporal'
              : Number(pid) === process.pid
                ? 'client'
                : 'other';
      kinds[kind] = (kinds[kind] ?? 0) + statSeconds(stat);
      // The API's main thread apart: the event loop every request's JavaScript runs on, which the model's and the
      // garbage collector's threads do not share.
      if (kind === 'api') {
        const mainThread = statSeconds(readFileSync(`/proc/${pid}/task/${pid}/stat`, 'utf8'));
        kinds['api main thread'] = (kinds['api main thread'] ?? 0) + mainThread;
      }
    } catch {
      // The process ended while being read.
    }
  }
  return kinds;
}

// What each kind used between two readings of cpuByKind, as "postgres 6.1, worker 4.5, ...".
export const cpuSpent = (before: Record<string, number>, after: Record<string, number>): string =>
  Object.keys(after)
    .map((kind) => `${kind} ${(after[kind]! - (before[kind] ?? 0)).toFixed(1)}`)
    .join(', ');

// A process's resident and peak resident memory (VmRSS, VmHWM), in MB.
export function memoryMb(pid: string | undefined): { now: number; peak: number } {
  if (!pid) return { now: NaN, peak: NaN };
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const mb = (key: string) => Math.round(Number(new RegExp(`^${key}:\\s+(\\d+)`, 'm').exec(status)?.[1] ?? NaN) / 1024);
  return { now: mb('VmRSS'), peak: mb('VmHWM') };
}
