import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { statusOf } from '../../api/http/errors.ts';
import { ERROR_CODES, isErrorCode, NOT_FOUND_KINDS, type ErrorCode } from '../../domain/error-codes.ts';
import { ERROR_KINDS, type ErrorKind } from '../../domain/errors.ts';
import { ERRORS_DOC, errorsDoc } from '../../scripts/errors-doc.ts';

const ROOT = join(import.meta.dirname, '..', '..');
const SOURCE_DIRS = ['api', 'domain', 'infra', 'activities', 'temporal', 'workflows'];

function sources(dir: string): string[] {
  return readdirSync(join(ROOT, dir)).flatMap((name) => {
    const path = join(ROOT, dir, name);
    if (statSync(path).isDirectory()) return sources(relative(ROOT, path));
    return path.endsWith('.ts') ? [path] : [];
  });
}
const files = SOURCE_DIRS.flatMap(sources)
  .filter((file) => !file.endsWith(join('domain', 'error-codes.ts')))
  .map((file) => ({ file: relative(ROOT, file), text: readFileSync(file, 'utf8') }));

interface Use {
  file: string;
  code: string;
  status?: number;
}

// Where a code is written in the source: thrown with a kind (whose status must be one of the code's), through a helper
// of a known status, or written into a body by hand. Each pattern: the code's group, and the status it is answered with.
const KIND = `'(${ERROR_KINDS.join('|')})'`;
const ARGUMENT = "(?:'[^']*'|`[^`]*`|[^,)]+)";
const PATTERNS: [RegExp, number, (m: RegExpMatchArray) => number | undefined][] = [
  [new RegExp(`new AppError\\(\\s*${KIND},\\s*'([^']+)'`, 'g'), 2, (m) => statusOf(m[1] as ErrorKind)],
  [/\binvalid\(\s*'([^']+)'/g, 1, () => 400],
  [/\bconflict\(\s*'([^']+)'/g, 1, () => 409],
  [
    new RegExp(`\\boauthError\\(\\s*'([^']+)',\\s*${ARGUMENT}(?:,\\s*${KIND})?,?\\s*\\)`, 'g'),
    1,
    (m) => statusOf((m[2] ?? 'invalid') as ErrorKind),
  ],
  [/\berrorJson\(\s*'([^']+)'/g, 1, () => undefined],
  [/\bbodyError: \(\) => '([^']+)'/g, 1, () => 400],
  [/[{,]\s*error: '([^']+)'/g, 1, () => undefined],
];
// `error:` keys that are not error codes.
const NOT_CODES: Record<string, string[]> = { 'temporal/runtime.ts': ['ERROR'] };

function uses(): Use[] {
  return files.flatMap(({ file, text }) =>
    PATTERNS.flatMap(([pattern, group, status]) =>
      [...text.matchAll(pattern)].map((m) => ({ file, code: m[group]!, status: status(m) })),
    ).filter((use) => !NOT_CODES[use.file]?.includes(use.code)),
  );
}

describe('error codes', () => {
  it('docs/errors.md is what scripts/errors-doc.ts writes from the registry', () => {
    // Run `node scripts/errors-doc.ts` after a change to domain/error-codes.ts.
    expect(readFileSync(ERRORS_DOC, 'utf8')).toBe(errorsDoc());
    const doc = errorsDoc();
    for (const [code, info] of Object.entries(ERROR_CODES)) expect(doc).toContain(`| \`${code}\` | ${info.status.join(', ')} |`);
  });

  it('every code written in the source is in the registry, with the status it is answered with', () => {
    const found = uses();
    // The scan still sees the code's many throw sites; a pattern that stopped matching would pass vacuously.
    expect(found.length).toBeGreaterThan(100);
    for (const use of found) {
      expect(isErrorCode(use.code), `${use.file}: ${use.code} is not in domain/error-codes.ts`).toBe(true);
      if (use.status !== undefined && isErrorCode(use.code)) {
        expect(ERROR_CODES[use.code].status, `${use.file}: ${use.code} answered with ${use.status}`).toContain(use.status);
      }
    }
  });

  it('lists no code the service never answers with', () => {
    const text = files.map((f) => f.text).join('\n');
    const unused = Object.keys(ERROR_CODES).filter((code) => !text.includes(`'${code}'`));
    expect(unused).toEqual([]);
  });

  it("keeps the contract's codes as the contract spells them and makes every other one snake_case", () => {
    const contract = Object.entries(ERROR_CODES)
      .filter(([, info]) => 'contract' in info && info.contract)
      .map(([code]) => code);
    expect(contract.sort()).toEqual(
      [
        'content required',
        'invalid json',
        'memory_quota_exceeded',
        'memory_too_large',
        'no patchable fields supplied',
        'not found',
        'rate-limited',
        'storage_quota_exceeded',
      ].sort(),
    );
    const others = Object.keys(ERROR_CODES).filter((code) => !contract.includes(code));
    for (const code of others) expect(code).toMatch(/^[a-z][a-z0-9]*(?:_[a-z0-9]+)*$/);
  });

  it('names every kind a 404 uses in the registry', () => {
    const kinds = files.flatMap(({ text }) => [...text.matchAll(/\bnotFound\(\s*'([^']+)'/g)].map((m) => m[1]!));
    expect(kinds.length).toBeGreaterThan(30);
    for (const kind of kinds) expect(NOT_FOUND_KINDS).toContain(kind);
    const code: ErrorCode = 'not found';
    expect(ERROR_CODES[code].status).toEqual([404]);
  });
});
