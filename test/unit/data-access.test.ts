import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';

// One data-access style: raw SQL through domain/sql.ts (docs/architecture.md, "Data access"). MikroORM is the
// connection, transaction and migration layer only, so no source defines an entity or calls the unit of work.

const ROOT = join(import.meta.dirname, '..', '..');
const FOLDERS = ['activities', 'api', 'bench', 'domain', 'infra', 'migrations', 'scripts', 'temporal', 'test', 'workflows'];
const THIS_FILE = join(import.meta.dirname, 'data-access.test.ts');

function sources(dir: string): string[] {
  return readdirSync(join(ROOT, dir)).flatMap((name) => {
    const path = join(ROOT, dir, name);
    if (statSync(path).isDirectory()) return sources(relative(ROOT, path));
    return path.endsWith('.ts') && path !== THIS_FILE ? [path] : [];
  });
}

const ENTITY = /\b(defineEntity|EntitySchema)\b|@Entity\(/;
// The EntityManager methods that need an entity: a call on an EntityManager (`em`, `tx`, `db`, a fork) names one.
const ENTITY_METHODS =
  'find findOne findOneOrFail findAll findAndCount count create persist flush remove assign merge upsert upsertMany insert'
    .concat(' insertMany nativeInsert nativeUpdate nativeDelete getReference refresh populate')
    .split(' ');
const UNIT_OF_WORK = new RegExp(`(\\b(em|tx|db)|\\.fork\\(\\))\\.(${ENTITY_METHODS.join('|')})\\(`);

const offending = (pattern: RegExp) =>
  FOLDERS.flatMap(sources).flatMap((file) =>
    readFileSync(file, 'utf8')
      .split('\n')
      .flatMap((line, i) => (pattern.test(line) ? [`${relative(ROOT, file)}:${i + 1}: ${line.trim()}`] : [])),
  );

describe('data access', () => {
  it('reads every source folder', () => {
    expect(FOLDERS.flatMap(sources).length).toBeGreaterThan(300);
  });

  it('defines no ORM entity', () => {
    expect(offending(ENTITY)).toEqual([]);
  });

  it("calls none of the unit of work's entity methods", () => {
    expect(offending(UNIT_OF_WORK)).toEqual([]);
  });
});
