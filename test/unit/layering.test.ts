import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';

const ROOT = join(import.meta.dirname, '..', '..');

function sources(dir: string): string[] {
  return readdirSync(join(ROOT, dir)).flatMap((name) => {
    const path = join(ROOT, dir, name);
    if (statSync(path).isDirectory()) return sources(relative(ROOT, path));
    return path.endsWith('.ts') ? [path] : [];
  });
}

const IMPORT = /^\s*import\s+(type\s+)?[^'"]*?from\s+'([^']+)'|^\s*import\s+'([^']+)'/gm;

function importsOf(file: string): { spec: string; typeOnly: boolean }[] {
  const text = readFileSync(file, 'utf8');
  return [...text.matchAll(IMPORT)].map((m) => ({ spec: (m[2] ?? m[3])!, typeOnly: Boolean(m[1]) }));
}

describe('layering', () => {
  it('domain/ knows nothing of HTTP or Temporal', () => {
    for (const file of sources('domain')) {
      for (const { spec } of importsOf(file)) {
        expect(spec, relative(ROOT, file)).not.toMatch(/^(koa|@koa\/|koa-body|@temporalio\/)/);
        expect(spec, relative(ROOT, file)).not.toMatch(/\/(api|temporal|activities|workflows)\//);
      }
    }
  });

  it('workflows/ import only @temporalio/workflow, each other, and types', () => {
    for (const file of sources('workflows')) {
      for (const { spec, typeOnly } of importsOf(file)) {
        const allowed = spec === '@temporalio/workflow' || (spec.startsWith('./') && !typeOnly) || typeOnly;
        expect(allowed, `${relative(ROOT, file)} imports ${spec}`).toBe(true);
      }
    }
  });

  it('activities/ never import the HTTP layer', () => {
    for (const file of sources('activities')) {
      for (const { spec } of importsOf(file)) expect(spec, relative(ROOT, file)).not.toMatch(/^(koa|@koa\/)|\/api\//);
    }
  });
});
