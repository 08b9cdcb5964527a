// Leading/trailing characters that wrap a name in running text but are never part of it. Symbols such as
// `#`, `+` and a leading `.` are kept: "C#", "C++" and ".NET" are names of their own.
const LEADING = /^[\s\p{Pi}\p{Pf}"'`¡¿,;:!?]+/u;
const TRAILING = /[\s\p{Pi}\p{Pf}"'`.,;:!?…]+$/u;
const BRACKETS: Record<string, string> = { '(': ')', '[': ']', '{': '}', '<': '>' };

function strip(s: string): string {
  let out = s.replace(LEADING, '').replace(TRAILING, '');
  // A bracket is stripped only as a matching pair around the whole name, so "node (runtime)" keeps its ")".
  while (out.length >= 2 && BRACKETS[out[0]!] === out[out.length - 1]) out = out.slice(1, -1).trim();
  return out;
}

// The key under which mentions of one entity meet: "The  PostgreSQL " and "postgresql" are the same entity.
// Empty when the input has nothing but punctuation and spaces.
export function normalizeEntityName(s: string): string {
  let out = s.normalize('NFKC').toLowerCase().replace(/\s+/gu, ' ');
  for (;;) {
    let next = strip(out);
    if (next.startsWith('the ')) next = next.slice(4);
    if (next === out) return out;
    out = next;
  }
}
