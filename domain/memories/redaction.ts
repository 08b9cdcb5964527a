import { Buffer } from 'node:buffer';

// Memories are written by agents that paste whatever they were looking at: config files, curl commands,
// stack traces. Secrets are replaced before anything is stored, so a leaked credential never reaches the
// database, its backups or a search index.
//
// Safety rules every pattern below follows, because content can be 256 KB and JS regexes backtrack:
// - a token pattern starts with a literal prefix guarded by a lookbehind that rejects the token's own
//   characters, so in a long run of token characters only the first position is ever tried;
// - every repetition in the table has an upper bound, so no single attempt can run away;
// - no repetition nests another that can match the same text.

export interface RedactionResult {
  text: string;
  count: number;
  /** Distinct kinds that were redacted, sorted. */
  kinds: string[];
}

interface Rule {
  readonly kind: string;
  /**
   * Global regex with a named group `secret`, the only text replaced. Context that must survive goes in a
   * named group `pre`, which must cover everything the match holds before `secret`.
   */
  readonly pattern: RegExp;
  /** Second opinion for shapes a regex cannot judge alone; a rejected match is left as it was. */
  readonly accept?: (secret: string, context: MatchContext) => boolean;
}

interface MatchContext {
  /** The `pre` group, or ''. */
  readonly pre: string;
  /** The character right after the secret, or ''. */
  readonly after: string;
}

// ---------------------------------------------------------------------------------------------------
// Judgement helpers

// Issued tokens are random, so they mix character classes; identifiers of the same shape rarely do.
function mixesClasses(value: string): boolean {
  const classes = Number(/[a-z]/.test(value)) + Number(/[A-Z]/.test(value)) + Number(/[0-9]/.test(value));
  return classes >= 2;
}

const PLACEHOLDER_WORDS = new Set([
  'changeme', 'password', 'passwd', 'pass', 'secret', 'token', 'apikey', 'redacted', 'placeholder', 'dummy',
  'sample', 'none', 'null', 'nil', 'undefined', 'true', 'false', 'todo', 'tbd', 'empty', 'hidden', 'masked',
]);

// Documentation, templates and examples are full of these; redacting them would only make memories
// harder to read, since they protect nothing.
function isPlaceholder(value: string): boolean {
  if (/^(?:\$|%|<|\{\{|\[)/.test(value)) return true; // $VAR, ${VAR}, %VAR%, <your-key>, {{ var }}
  if (/\$\{|\{\{|%\(/.test(value)) return true; // templated part inside the value
  if (/^[x*.#_-]+$/i.test(value)) return true; // xxxx, ****, xxxx-xxxx
  if (/your|example|placeholder|change_?me|replace_?me|insert_?here|redacted|xxxx|\*\*\*/i.test(value)) return true;
  return PLACEHOLDER_WORDS.has(value.toLowerCase().replace(/[^a-z0-9]/g, ''));
}

// Words and identifiers: letters, `-`/`_` between parts, and digits only where identifiers put them,
// before a capital (Uint8Array, Base64Url). Trailing or embedded digits (Summer2024, hunter2x) are what
// people add to make a password, so those still count as secrets. A single long lowercase run is kept
// as a secret too: it is what a passphrase looks like, and identifiers that long have humps.
function isWordOrIdentifier(value: string): boolean {
  if (/^[a-z]+$/.test(value)) return value.length < 20;
  return value.split(/[-_]/).every((part) => /^(?:[A-Za-z]+|[A-Za-z]*[a-z](?:[0-9]+[A-Z][A-Za-z]*)+)$/.test(part));
}

// Generic `password = ...` assignments have no vendor prefix to go by, so the value must carry the
// evidence: long enough, and not a word, identifier, number, code reference, path or URL (those are
// what such keys hold in prose, type annotations and code far more often than a credential).
function looksLikeSecret(value: string, { after }: MatchContext): boolean {
  if (value.length < 8 || isPlaceholder(value)) return false;
  if (after === '(' || after === '<') return false; // a call or a generic type: getToken(), Promise<T>
  if (/^[0-9]+$/.test(value)) return false; // counts, limits, ports
  if (isWordOrIdentifier(value)) return false;
  if (/^[A-Za-z_$][A-Za-z_$]*(?:[?!]?\.[A-Za-z_$][A-Za-z0-9_$]*)+!?$/.test(value)) return false; // process.env.X, a?.b!
  if (/^[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+$/.test(value)) return false; // the name of an env variable
  if (/^(?:\/|\.{1,2}\/|~\/|[A-Za-z]:\\)/.test(value)) return false; // paths
  return !value.includes('://') && !value.includes('::'); // URLs, Rust and C++ paths
}

// Documentation and dev defaults say `postgres://postgres:postgres@...`; a password equal to the user
// name protects nothing, and redacting it would only hide which account was meant.
function isUrlPassword(password: string, { pre }: MatchContext): boolean {
  const user = pre.slice(pre.indexOf('://') + 3, -1);
  return password !== user && !isPlaceholder(password);
}

const bearerLooksReal = (token: string): boolean => mixesClasses(token) && !isPlaceholder(token);

// `Basic` is an ordinary English word; the credential is only recognised by decoding to `user:pass`.
function isBasicCredential(encoded: string): boolean {
  const decoded = Buffer.from(encoded, 'base64');
  // Node skips characters it cannot decode; re-encoding proves the text really was base64.
  if (decoded.toString('base64').replace(/=+$/, '') !== encoded.replace(/=+$/, '')) return false;
  const text = decoded.toString('utf8');
  return text.length >= 3 && text.indexOf(':') > 0 && !/[\p{Cc}\uFFFD]/u.test(text);
}

// ---------------------------------------------------------------------------------------------------
// Generic assignments: `DB_PASSWORD=...`, `"client_secret": "..."`, `api_key: ...`, `--token=...`.
// The key may end a longer name (DB_PASSWORD, csrf_token), but must be followed by the separator, so
// PASSWORD_FILE or token_count are not keys.

const KEY = String.raw`(?:passw(?:or)?d|passphrase|pwd|secret|(?:api|access|secret|private|signing|encryption|master|client)[_-]?key|apikey|token)`;
const ASSIGN = String.raw`${KEY}\\?["'\x60]?[ \t]{0,16}(?::=|=>|[:=])[ \t]{0,16}`;

// A quoted value ends at its quote; values with spaces are left alone, as they are prose far more often
// than passphrases.
const QUOTED_ASSIGNMENT = new RegExp(
  String.raw`(?<pre>${ASSIGN}\\?(?<q>["'\x60]))(?<secret>[^"'\x60\s\\]{1,256})(?=\\?\k<q>)`,
  'gi',
);
// An unquoted value ends at whitespace or at the punctuation that ends values in prose, code, YAML flow
// maps and query strings; `,` `;` `.` only end it when followed by a space, and `&` only when a new
// query parameter follows.
const UNQUOTED_ASSIGNMENT = new RegExp(
  String.raw`(?<pre>${ASSIGN})(?<secret>(?:[^\s"'\x60\\,;.&<>()\[\]{}]|[.,;](?![\s"'\x60.,;]|$)|&(?![A-Za-z0-9_.-]{1,64}=)){1,256})`,
  'gi',
);

// ---------------------------------------------------------------------------------------------------
// The table. Order matters: a rule only sees what earlier rules left, so the most specific shapes go
// first (a PEM block before anything that could match inside it, Anthropic's `sk-ant-` before OpenAI's
// `sk-`, JWTs before the Bearer heuristic that would otherwise claim them as plain bearer tokens, vendor
// tokens before the generic assignments that would report them under a vaguer kind).

const RULES: readonly Rule[] = [
  {
    kind: 'private_key',
    // The body stops at the next BEGIN, so several unterminated headers cost one pass, not one each.
    pattern:
      /(?<secret>-----BEGIN (?<label>(?:[A-Z0-9]{1,16} ){0,3}PRIVATE KEY(?: BLOCK)?)-----(?:(?!-----BEGIN )[\s\S]){0,65536}?-----END \k<label>-----)/g,
  },
  {
    kind: 'private_key',
    // Truncated pastes lose the END line but still leak the key: take the header and the base64 lines
    // after it (newlines may be literal `\n`, as in service-account JSON). Each line must be taken whole,
    // so consecutive lines cannot be split two ways.
    pattern:
      /(?<secret>-----BEGIN (?:[A-Z0-9]{1,16} ){0,3}PRIVATE KEY(?: BLOCK)?-----(?:(?:\r?\n|\\n|[ \t]){0,2}(?:[A-Za-z0-9+/=]{16,16384}(?![A-Za-z0-9+/=])|(?:Proc-Type|DEK-Info): [^\r\n\\]{1,128})){0,1024})/g,
  },
  {
    kind: 'jwt',
    // The signature may be empty (alg "none"), the two dots may not.
    pattern: /(?<![A-Za-z0-9_.-])(?<secret>eyJ[A-Za-z0-9_-]{8,2048}\.[A-Za-z0-9_-]{8,16384}\.[A-Za-z0-9_-]{0,2048})(?![A-Za-z0-9_-])/g,
  },
  { kind: 'aws_access_key_id', pattern: /(?<![A-Za-z0-9])(?<secret>(?:AKIA|ASIA)[A-Z0-9]{16})(?![A-Za-z0-9])/g },
  {
    kind: 'aws_secret_access_key',
    // 40 base64 characters are everywhere (hashes, ids), so only the assignment context is trusted.
    pattern:
      /(?<pre>(?:aws[_-]?secret(?:[_-]?access)?[_-]?key|secret[_-]?access[_-]?key)\\?["']?[ \t]{0,16}(?::=|=>|[:=])[ \t]{0,16}\\?["']?)(?<secret>[A-Za-z0-9/+]{40})(?![A-Za-z0-9/+=])/gi,
  },
  { kind: 'google_api_key', pattern: /(?<![A-Za-z0-9_-])(?<secret>AIza[A-Za-z0-9_-]{35})(?![A-Za-z0-9_-])/g },
  {
    kind: 'google_oauth_client_secret',
    pattern: /(?<![A-Za-z0-9_-])(?<secret>GOCSPX-[A-Za-z0-9_-]{24,40})(?![A-Za-z0-9_-])/g,
  },
  {
    kind: 'github_token',
    pattern: /(?<![A-Za-z0-9_])(?<secret>gh[pousr]_[A-Za-z0-9]{36,251})(?![A-Za-z0-9_])/g,
    accept: mixesClasses,
  },
  {
    kind: 'github_token',
    pattern: /(?<![A-Za-z0-9_])(?<secret>github_pat_[A-Za-z0-9_]{40,251})(?![A-Za-z0-9_])/g,
    accept: mixesClasses,
  },
  {
    kind: 'gitlab_token',
    pattern: /(?<![A-Za-z0-9_-])(?<secret>gl(?:pat|dt|rt|ptt|soat|cbt)-[A-Za-z0-9_-]{20,250})(?![A-Za-z0-9_-])/g,
    accept: mixesClasses,
  },
  {
    kind: 'slack_webhook_url',
    // The host stays so the memory still says what the URL was.
    pattern: /(?<pre>hooks\.slack\.com\/(?:services|workflows|triggers)\/)(?<secret>[A-Za-z0-9_/-]{16,250})(?![A-Za-z0-9_/-])/g,
  },
  {
    kind: 'slack_token',
    // A digit is required so hyphenated words after a `xoxb-` mention are not taken for a token.
    pattern: /(?<![A-Za-z0-9_-])(?<secret>(?:xox[abposre]|xapp)-[A-Za-z0-9-]{10,250})(?![A-Za-z0-9_-])/g,
    accept: (token) => /[0-9]/.test(token),
  },
  {
    kind: 'discord_bot_token',
    // base64(user id) . base64(timestamp) . HMAC; user ids are 17-20 digits, so the first part starts M-O.
    pattern: /(?<![A-Za-z0-9_.-])(?<secret>[MNO][A-Za-z0-9_-]{23,27}\.[A-Za-z0-9_-]{6}\.[A-Za-z0-9_-]{27,40})(?![A-Za-z0-9_.-])/g,
    accept: mixesClasses,
  },
  {
    kind: 'telegram_bot_token',
    // No word boundary on the left: the token often follows `bot` in api.telegram.org/bot<token>/...
    pattern: /(?<![0-9])(?<secret>[0-9]{8,10}:AA[A-Za-z0-9_-]{33})(?![A-Za-z0-9_-])/g,
  },
  {
    kind: 'stripe_key',
    pattern: /(?<![A-Za-z0-9_])(?<secret>[rs]k_(?:live|test)_[A-Za-z0-9]{24,250})(?![A-Za-z0-9_])/g,
    accept: mixesClasses,
  },
  {
    kind: 'stripe_webhook_secret',
    pattern: /(?<![A-Za-z0-9_])(?<secret>whsec_[A-Za-z0-9]{32,250})(?![A-Za-z0-9_])/g,
    accept: mixesClasses,
  },
  {
    kind: 'anthropic_api_key',
    pattern: /(?<![A-Za-z0-9_-])(?<secret>sk-ant-[A-Za-z0-9_-]{32,250})(?![A-Za-z0-9_-])/g,
    accept: mixesClasses,
  },
  {
    kind: 'openai_api_key',
    pattern: /(?<![A-Za-z0-9_-])(?<secret>sk-(?:proj|svcacct|admin|None)-[A-Za-z0-9_-]{20,250})(?![A-Za-z0-9_-])/g,
    accept: mixesClasses,
  },
  {
    kind: 'openai_api_key',
    // Legacy keys have no hyphen after `sk-`; excluding hyphens (and requiring the whole run to end there)
    // keeps hyphenated words like `sk-8` or `task-force-...` out.
    pattern: /(?<![A-Za-z0-9_-])(?<secret>sk-[A-Za-z0-9]{32,250})(?![A-Za-z0-9_-])/g,
    accept: mixesClasses,
  },
  {
    kind: 'huggingface_token',
    pattern: /(?<![A-Za-z0-9_])(?<secret>hf_[A-Za-z0-9]{34,250})(?![A-Za-z0-9_])/g,
    accept: mixesClasses,
  },
  {
    kind: 'npm_token',
    pattern: /(?<![A-Za-z0-9_])(?<secret>npm_[A-Za-z0-9]{36})(?![A-Za-z0-9_])/g,
    accept: mixesClasses,
  },
  {
    kind: 'sendgrid_api_key',
    pattern: /(?<![A-Za-z0-9_.-])(?<secret>SG\.[A-Za-z0-9_-]{22}\.[A-Za-z0-9_-]{43})(?![A-Za-z0-9_-])/g,
  },
  {
    kind: 'service_token',
    // Our own API tokens: `svc_` + base64url of 32 random bytes (see domain/accounts/secrets.ts).
    pattern: /(?<![A-Za-z0-9_-])(?<secret>svc_[A-Za-z0-9_-]{43})(?![A-Za-z0-9_-])/g,
    accept: mixesClasses,
  },
  {
    kind: 'url_credentials',
    // Only the password goes: scheme, user and host keep the memory readable. The password may hold an
    // unencoded `@`, so it runs to the last `@` before the host.
    pattern:
      /(?<pre>(?<![A-Za-z0-9+.-])[A-Za-z][A-Za-z0-9+.-]{1,31}:\/\/[^\s:/?#@"'`<>[\]\\]{0,256}:)(?<secret>[^\s/?#"'`<>[\]\\]{1,256})(?=@[A-Za-z0-9[])/g,
    accept: isUrlPassword,
  },
  {
    kind: 'bearer_token',
    // RFC 6750 token characters. A sentence's full stop after the token is not part of it.
    pattern:
      /(?<pre>\bBearer[ \t]{1,16})(?<secret>[A-Za-z0-9._~+/-]{15,4095}[A-Za-z0-9_~+/-]={0,2})(?![A-Za-z0-9_~+/=-]|\.[A-Za-z0-9_~+/-])/gi,
    accept: bearerLooksReal,
  },
  {
    kind: 'basic_auth',
    pattern: /(?<pre>\bBasic[ \t]{1,16})(?<secret>[A-Za-z0-9+/]{4,4096}={0,2})(?![A-Za-z0-9+/=])/gi,
    accept: isBasicCredential,
  },
  { kind: 'generic_secret', pattern: QUOTED_ASSIGNMENT, accept: looksLikeSecret },
  { kind: 'generic_secret', pattern: UNQUOTED_ASSIGNMENT, accept: looksLikeSecret },
];

export const REDACTION_KINDS: readonly string[] = Object.freeze([...new Set(RULES.map((rule) => rule.kind))].sort());

const marker = (kind: string): string => `[REDACTED:${kind}]`;
const MARKER = /\[REDACTED:[a-z0-9_]+\]/g;

// Where markers sit in `text`, so a later rule can refuse to match across one (a URL password or a
// generic value could otherwise swallow `[REDACTED:...]` and report it a second time).
function markerSpans(text: string): [number, number][] {
  if (!text.includes('[REDACTED:')) return [];
  return [...text.matchAll(MARKER)].map((m) => [m.index, m.index + m[0].length]);
}

export function redactSecrets(input: string): RedactionResult {
  let text = input;
  let count = 0;
  const kinds = new Set<string>();

  for (const rule of RULES) {
    const spans = markerSpans(text);
    let next = 0; // replace visits matches left to right, so one cursor over the spans suffices
    const touchesMarker = (start: number, end: number): boolean => {
      while (next < spans.length && spans[next]![1] <= start) next++;
      const span = spans[next];
      return span !== undefined && span[0] < end;
    };

    text = text.replace(rule.pattern, (match: string, ...rest: unknown[]) => {
      const groups = rest.at(-1) as Record<string, string | undefined>;
      const whole = rest.at(-2) as string;
      const offset = rest.at(-3) as number;
      const secret = groups['secret'];
      if (secret === undefined) return match;
      const pre = groups['pre'] ?? '';
      const start = offset + pre.length;
      if (touchesMarker(start, start + secret.length)) return match;
      if (rule.accept && !rule.accept(secret, { pre, after: whole.charAt(start + secret.length) })) return match;
      count++;
      kinds.add(rule.kind);
      return pre + marker(rule.kind) + match.slice(pre.length + secret.length);
    });
  }

  return { text, count, kinds: [...kinds].sort() };
}
