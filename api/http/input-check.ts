import { z } from 'zod';

// Checks every request's path parameters, query and JSON body once, before any schema sees them, for what
// no field of the API may hold:
// - a NUL character (PostgreSQL's text and jsonb cannot store it) or a lone UTF-16 surrogate (not text: it
//   cannot be encoded as UTF-8, so PostgreSQL refuses it too, or it would be stored as U+FFFD), in a value or
//   in an object key, at any depth;
// - nesting deeper than MAX_INPUT_DEPTH, checked without recursion, so that no recursive walk after it
//   (the schemas, metadata flattening, PostgreSQL's jsonb) meets a document thousands of levels deep.
// One check for the whole API rather than one per string field: a field added later is covered too.

// Objects and arrays inside each other, counting the body itself as level 1. Documented in docs/api-decisions.md.
export const MAX_INPUT_DEPTH = 32;

type Issue = { path: (string | number)[]; message: string };

function stringProblem(text: string): string | undefined {
  if (text.includes('\u0000')) return 'must not contain the NUL character (\\u0000)';
  if (!text.isWellFormed()) return 'must not contain a lone UTF-16 surrogate (it is not text)';
  return undefined;
}

// The problems found, at most a few (the first of each kind is enough to act on).
function inputIssues(value: unknown, maxIssues = 10): Issue[] {
  const issues: Issue[] = [];
  const stack: { value: unknown; path: (string | number)[]; depth: number }[] = [{ value, path: [], depth: 0 }];
  while (stack.length > 0 && issues.length < maxIssues) {
    const { value: current, path, depth } = stack.pop()!;
    if (typeof current === 'string') {
      const problem = stringProblem(current);
      if (problem) issues.push({ path, message: problem });
    } else if (current !== null && typeof current === 'object') {
      if (depth + 1 > MAX_INPUT_DEPTH) {
        issues.push({ path, message: `nests objects and arrays deeper than ${MAX_INPUT_DEPTH} levels` });
        continue;
      }
      const entries: [string | number, unknown][] = Array.isArray(current) ? current.map((item, i) => [i, item]) : Object.entries(current);
      for (const [key, item] of entries.reverse()) {
        if (typeof key === 'string') {
          const problem = stringProblem(key);
          if (problem) issues.push({ path: [...path, key], message: `key ${problem}` });
        }
        stack.push({ value: item, path: [...path, key], depth: depth + 1 });
      }
    }
  }
  return issues;
}

// The same problems as a ZodError, so they reach the caller through the one validation error of the API.
export function inputError(value: unknown): z.ZodError | undefined {
  const issues = inputIssues(value);
  if (issues.length === 0) return undefined;
  return new z.ZodError(issues.map((issue) => ({ code: 'custom' as const, path: issue.path, message: issue.message, input: undefined })));
}
