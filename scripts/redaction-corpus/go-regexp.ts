// Translates a Go (RE2) regular expression into JavaScript source that means the same for gitleaks'
// patterns. RE2's flags `(?i)` and `(?s)` apply to the rest of the enclosing group, across `|`; scoped
// forms `(?i:...)` and `(?-i:...)` nest. JavaScript's own modifiers were tried first and dropped: V8 in
// Node 24 misses matches with them (`/(?i:a(?:(?:b|c)d?)?e)/` fails on "ABDE"). So flags are spelt out
// instead: a case-insensitive letter becomes `[aA]`, a case-insensitive class gains the other case, and
// `.` under `s` becomes `[\s\S]`. `(?P<name>` is `(?<name>`; `\z` and `\A` and POSIX classes `[:alnum:]`
// get JavaScript spellings. Anything else RE2 reads differently throws, so a new gitleaks version cannot
// slip in a silently wrong rule.

const POSIX: Record<string, string> = {
  alnum: 'A-Za-z0-9',
  alpha: 'A-Za-z',
  digit: '0-9',
  lower: 'a-z',
  upper: 'A-Z',
  space: '\\t\\n\\v\\f\\r ',
  xdigit: '0-9A-Fa-f',
  word: '\\w',
  punct: '!-\\/:-@\\[-`{-~',
};

interface Flags {
  i: boolean;
  s: boolean;
}

const isLetter = (c: string): boolean => /^[A-Za-z]$/.test(c);
const otherCase = (c: string): string => (c === c.toLowerCase() ? c.toUpperCase() : c.toLowerCase());

export function goRegexpToJs(pattern: string): string {
  let out = '';
  // Each open group's flags as they stand now; `(?i)` changes the innermost one.
  const stack: Flags[] = [{ i: false, s: false }];
  const flags = (): Flags => stack.at(-1)!;
  let i = 0;
  while (i < pattern.length) {
    const c = pattern[i]!;
    if (c === '\\') {
      const next = pattern[i + 1];
      if (next === undefined) throw new Error(`trailing backslash in ${pattern}`);
      if (next === 'z') out += '(?![\\s\\S])';
      else if (next === 'A') out += '(?<![\\s\\S])';
      else if (isLetter(next) && !'bBdDwWsSnrtfvx'.includes(next)) throw new Error(`unsupported escape \\${next} in ${pattern}`);
      else out += c + next;
      i += 2;
      continue;
    }
    if (c === '[') {
      const end = classEnd(pattern, i);
      out += translateClass(pattern.slice(i, end + 1), flags().i);
      i = end + 1;
      continue;
    }
    if (c === '(') {
      const setting = /^\(\?([a-zA-Z-]+)\)/.exec(pattern.slice(i));
      if (setting) {
        stack[stack.length - 1] = applyFlags(flags(), setting[1]!, pattern);
        i += setting[0].length;
        continue;
      }
      const scoped = /^\(\?([a-zA-Z-]+):/.exec(pattern.slice(i));
      if (scoped) {
        out += '(?:';
        stack.push(applyFlags(flags(), scoped[1]!, pattern));
        i += scoped[0].length;
        continue;
      }
      if (pattern.startsWith('(?P<', i)) {
        const close = pattern.indexOf('>', i);
        out += '(?<' + pattern.slice(i + 4, close + 1);
        i = close + 1;
      } else if (pattern.startsWith('(?:', i)) {
        out += '(?:';
        i += 3;
      } else if (pattern.startsWith('(?', i)) {
        throw new Error(`unsupported group at ${i} in ${pattern}`);
      } else {
        out += '(';
        i += 1;
      }
      stack.push({ ...flags() });
      continue;
    }
    if (c === ')') {
      stack.pop();
      if (stack.length === 0) throw new Error(`unbalanced ) in ${pattern}`);
      out += ')';
      i += 1;
      continue;
    }
    if (c === '.' && flags().s) out += '[\\s\\S]';
    else if (isLetter(c) && flags().i) out += `[${c}${otherCase(c)}]`;
    else out += c;
    i += 1;
  }
  if (stack.length !== 1) throw new Error(`unbalanced ( in ${pattern}`);
  return out;
}

// RE2 knows i, m, s and U; only i and s matter for gitleaks' patterns (none uses m or U).
function applyFlags(current: Flags, spec: string, pattern: string): Flags {
  if (/[^is-]/.test(spec)) throw new Error(`unsupported flags (?${spec}) in ${pattern}`);
  const [on, off = ''] = spec.split('-');
  return {
    i: on!.includes('i') ? true : off.includes('i') ? false : current.i,
    s: on!.includes('s') ? true : off.includes('s') ? false : current.s,
  };
}

// Index of the `]` closing the class that opens at `start` (a `]` first in the class is a literal).
function classEnd(pattern: string, start: number): number {
  let i = start + 1;
  if (pattern[i] === '^') i += 1;
  if (pattern[i] === ']') i += 1;
  while (i < pattern.length) {
    if (pattern[i] === '\\') i += 2;
    else if (pattern.startsWith('[:', i)) i = pattern.indexOf(':]', i + 2) + 2;
    else if (pattern[i] === ']') return i;
    else i += 1;
  }
  throw new Error(`unterminated class in ${pattern}`);
}

// A class, with POSIX names spelt out and, when case-insensitive, the other case of every letter in it.
function translateClass(cls: string, caseless: boolean): string {
  const body = cls.slice(1, -1).replace(/\[:(\^?)([a-z]+):\]/g, (_m, negated: string, name: string) => {
    const set = POSIX[name];
    if (set === undefined || negated) throw new Error(`unsupported POSIX class [:${negated}${name}:]`);
    return set;
  });
  const negated = body.startsWith('^');
  // A `]` first in a class is a literal in RE2 and ends an empty class in JavaScript.
  const items = (negated ? body.slice(1) : body).replace(/^\]/, '\\]');
  if (!caseless) return `[${negated ? '^' : ''}${items}]`;
  const extra = new Set<string>();
  // Walk the items: single characters (maybe escaped) and ranges a-b.
  let k = 0;
  const next = (): string | null => {
    if (k >= items.length) return null;
    if (items[k] === '\\') {
      const escape = items.slice(k, k + 2);
      k += 2;
      if (escape === '\\x') {
        const hex = items.slice(k, k + 2);
        k += 2;
        return String.fromCharCode(parseInt(hex, 16));
      }
      return /^\\[dDwWsSnrtfv]$/.test(escape) ? null : escape[1]!;
    }
    return items[k++]!;
  };
  while (k < items.length) {
    const first = next();
    if (first !== null && items[k] === '-' && k + 1 < items.length) {
      k += 1;
      const last = next();
      if (last === null) continue;
      for (let code = first.charCodeAt(0); code <= last.charCodeAt(0); code++) {
        const ch = String.fromCharCode(code);
        if (isLetter(ch)) extra.add(otherCase(ch));
      }
    } else if (first !== null && isLetter(first)) {
      extra.add(otherCase(first));
    }
  }
  // First, so that a `-` closing the items stays a literal rather than starting a range.
  return `[${negated ? '^' : ''}${[...extra].sort().join('')}${items}]`;
}
