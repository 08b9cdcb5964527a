// Writes docs/errors.md from the registry of error codes (domain/error-codes.ts): `node scripts/errors-doc.ts`.
// test/unit/error-codes.test.ts fails when the file differs from what this writes.
import { writeFile } from 'node:fs/promises';
import { ERROR_CODES, NOT_FOUND_KINDS, UNAUTHORIZED_REASON_MEANINGS, type ErrorCodeInfo } from '../domain/error-codes.ts';

export const ERRORS_DOC = new URL('../docs/errors.md', import.meta.url);

// A paragraph in lines of at most 116 characters, as the other guides are written; a code span stays on one line.
function wrap(text: string, width = 116): string {
  const lines: string[] = [];
  let line = '';
  for (const word of text.match(/[^ `]*`[^`]*`[^ ]*|[^ ]+/g) ?? []) {
    if (line && line.length + 1 + word.length > width) {
      lines.push(line);
      line = word;
    } else line = line ? `${line} ${word}` : word;
  }
  return [...lines, line].join('\n');
}

const cell = (text: string): string => text.replaceAll('|', '\\|');

export function errorsDoc(): string {
  const codes = (Object.entries(ERROR_CODES) as [string, ErrorCodeInfo][]).sort(
    ([a, x], [b, y]) => x.status[0]! - y.status[0]! || a.localeCompare(b),
  );
  const rows = codes.map(([code, info]) => {
    const where = info.area ? cell(info.area) : 'any';
    const meaning = cell(info.meaning) + (info.contract ? " The contract's code." : '');
    return `| \`${code}\` | ${info.status.join(', ')} | ${where} | ${meaning} |`;
  });
  const kinds = NOT_FOUND_KINDS.map((kind) => `\`${kind}\``).join(', ');
  const notFound = wrap(
    '`not found` names the kind of object and the id asked for: `memory 0b1c2d3e-… not found`. An id of another organization ' +
      `answers exactly like an id that does not exist. The kinds: ${kinds} (\`route\`: a path no route serves, named with its method).`,
  );
  const reasons = Object.entries(UNAUTHORIZED_REASON_MEANINGS).map(([reason, meaning]) => `| \`${reason}\` | ${cell(meaning)} |`);
  return `# Errors

<!-- Generated from domain/error-codes.ts by \`node scripts/errors-doc.ts\`; do not edit by hand. -->

Every error answer is JSON: \`{ error, message?, ...extra }\`. \`error\` is a machine-readable code from the table
below and keeps its meaning once published; \`message\` says in words what is wrong, for people, and may be reworded.
Codes that add fields name them in their row. The contract's own codes keep their spelling (\`invalid json\`,
\`content required\`, \`no patchable fields supplied\`, \`not found\`, \`rate-limited\`); every other code is
snake_case. A code is used for what it says and nothing else: \`content required\` only when a memory's content is
missing, null or blank, never for another field (a bad \`tags\` is \`validation_failed\` naming \`body.tags\`).

## Validation

\`validation_failed\` carries \`issues: [{ path, message }]\`, each path starting with \`body.\`, \`query.\` or \`path.\`
(\`body.tags.0\`, \`query.limit\`, \`path.id\`). \`message\` joins them.

## 401 unauthorized

\`unauthorized\` carries \`reason\`, one of four cases, and a \`message\` that says it in words:

| reason | When |
|---|---|
${reasons.join('\n')}

## 404 not found

${notFound}

## Retries

429 and 503 answers carry \`retry_after\` in the body and the \`Retry-After\` header, in seconds.

## MCP tools and batches

An MCP tool (\`/mcp\`) answers an error of the API as a tool error (\`isError: true\`) whose text starts with the same
code and message (\`not found: memory 0b1c… not found\`), and whose \`_meta\` holds the API's error body as it is
(\`error\`, \`message\`, \`issues\`, \`reason\`, ...) with its \`status\`. A tool input that fails the tool's schema is
sent to the route anyway, so its error is the route's own.

\`POST /api/memories/batch\` reports each failed item with \`index\`, \`status\`, \`error\` and \`message\`, and
\`PUT /api/memories/batch\` each failed row with \`id\`, \`error\` and \`message\` (and \`issues\` for
\`validation_failed\` or \`unknown_field\`): what its single call would have answered.

## Every code

Sorted by status. Where: the part of the API that answers it (any: any route).

| error | Status | Where | Meaning |
|---|---|---|---|
${rows.join('\n')}
`;
}

if (import.meta.url === `file://${process.argv[1]}`) await writeFile(ERRORS_DOC, errorsDoc());
