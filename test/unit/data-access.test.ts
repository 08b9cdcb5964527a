import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';

// One data-access style per transaction (docs/architecture.md, "Data access"). A textual check of each
// `transactional(` callback's own body: it cannot follow calls into helpers, so it catches the direct mixes only.

const ROOT = join(import.meta.dirname, '..', '..');

function sources(dir: string): string[] {
  return readdirSync(join(ROOT, dir)).flatMap((name) => {
    const path = join(ROOT, dir, name);
    if (statSync(path).isDirectory()) return sources(relative(ROOT, path));
    return path.endsWith('.ts') ? [path] : [];
  });
}

// The body of each callback passed to `transactional(`, by brace matching from the arrow's `{`.
function transactionBodies(text: string): string[] {
  const bodies: string[] = [];
  for (const m of text.matchAll(/transactional\(\s*async\s*\([^)]*\)\s*=>\s*\{/g)) {
    let depth = 0;
    const start = m.index + m[0].length - 1;
    for (let i = start; i < text.length; i++) {
      if (text[i] === '{') depth++;
      else if (text[i] === '}' && --depth === 0) {
        bodies.push(text.slice(start, i + 1));
        break;
      }
    }
  }
  return bodies;
}

const UNIT_OF_WORK = /\b(tx|em)\.(create|persist|flush|find|findOne|findOneOrFail|count|nativeUpdate|nativeDelete|remove|assign|upsert)\(/;
const RAW = /\b(query|queryOne|recordAudit|enqueueJobs|scheduleOrgErasure|deleteByCtid|bumpCounters|recordEvents|insert[A-Z]\w*)\(/;

describe('data access', () => {
  it('finds the transactions it checks', () => {
    const count = sources('domain').reduce((n, file) => n + transactionBodies(readFileSync(file, 'utf8')).length, 0);
    expect(count).toBeGreaterThan(40);
  });

  it('no transaction in domain/ mixes raw SQL with the unit of work', () => {
    const mixed = sources('domain').flatMap((file) => {
      const name = relative(ROOT, file);
      return transactionBodies(readFileSync(file, 'utf8'))
        .filter((body) => UNIT_OF_WORK.test(body) && RAW.test(body))
        .map((body) => `${name}: ${body.slice(0, 80)}`);
    });
    expect(mixed).toEqual([]);
  });
});
