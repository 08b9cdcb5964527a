import { Buffer } from 'node:buffer';
import { shannonEntropy } from './entropy.ts';
import type { Finding } from './finding.ts';

// The service's own rules, run beside gitleaks' (see redact.ts). They cover what gitleaks' rules miss
// or judge worse for text an agent pastes: truncated PEM keys, passwords in URLs, Basic credentials
// (checked by decoding), our own API tokens, LLM providers gitleaks has no rule for, and assignments
// where a value must look random rather than merely be long.
//
// Safety rules every pattern below follows, because content can be 256 KB and JS regexes backtrack:
// - a token pattern starts with a literal prefix guarded by a lookbehind that rejects the token's own
//   characters, so in a long run of token characters only the first position is ever tried;
// - every repetition in the table has an upper bound, so no single attempt can run away;
// - no repetition nests another that can match the same text.

export interface Rule {
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
  /** Up to three characters after the secret. */
  readonly following: string;
  /** Up to 16 characters before the match. */
  readonly before: string;
}

// ---------------------------------------------------------------------------------------------------
// Judgement helpers

// `abc123...` or `abc123…`: an abbreviated value in documentation or a log, not the secret itself.
export const isAbbreviated = (following: string): boolean => following.startsWith('..') || following.startsWith('\u2026');

// Issued tokens are random, so they mix character classes; identifiers of the same shape rarely do.
function mixesClasses(value: string): boolean {
  const classes = Number(/[a-z]/.test(value)) + Number(/[A-Z]/.test(value)) + Number(/[0-9]/.test(value));
  return classes >= 2;
}

const PLACEHOLDER_WORDS = new Set([
  'changeme',
  'password',
  'passwd',
  'pass',
  'secret',
  'token',
  'apikey',
  'redacted',
  'placeholder',
  'dummy',
  'sample',
  'none',
  'null',
  'nil',
  'undefined',
  'true',
  'false',
  'todo',
  'tbd',
  'empty',
  'hidden',
  'masked',
]);

// Documentation, templates and examples are full of these; redacting them would only make memories
// harder to read, since they protect nothing.
export function isPlaceholder(value: string): boolean {
  if (/^(?:\$|%|<|\{\{|\[)/.test(value)) return true; // $VAR, ${VAR}, %VAR%, <your-key>, {{ var }}
  if (/\$\{|\{\{|%\(/.test(value)) return true; // templated part inside the value
  if (/^[x*.#_-]+$/i.test(value)) return true; // xxxx, ****, xxxx-xxxx
  if (/your|example|placeholder|change_?me|replace_?me|insert_?here|redacted|xxxx|\*\*\*/i.test(value)) return true;
  if (/0123456789|1234567890|abcdefghij/i.test(value)) return true; // a counted-out sample, not a random value
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
function looksLikeSecret(value: string, { pre, after, following, before }: MatchContext): boolean {
  if (value.length < 10 || isPlaceholder(value) || shannonEntropy(value) < 2.5) return false;
  // A call or a generic type: getToken(), Promise<T> (but `</` closes an XML element around the value).
  if (after === '(' || (after === '<' && !following.startsWith('</'))) return false;
  if (isAbbreviated(following)) return false;
  // publicToken, publishable_key, csrf_token: meant to be seen. jsonwebtoken: a word, not a key name.
  if (/(?:public|publishable|csrf|xsrf)[_.-]?(?:api[_-]?)?(?:key|token)/i.test(before + pre)) return false;
  if (/[a-z]$/.test(before) && /^[a-z]/.test(pre)) return false;
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
const ASSIGN = String.raw`${KEY}\\?["'\x60]?[ \t]{0,16}(?:::=|:=|=>|\?=|[:=])[ \t]{0,16}`;

// A quoted value ends at its quote; values with spaces are left alone, as they are prose far more often
// than passphrases.
const QUOTED_ASSIGNMENT = new RegExp(String.raw`(?<pre>${ASSIGN}\\?(?<q>["'\x60]))(?<secret>[^"'\x60\s\\]{1,256})(?=\\?\k<q>)`, 'gi');
// An unquoted value ends at whitespace or at the punctuation that ends values in prose, code, YAML flow
// maps and query strings; `,` `;` `.` only end it when followed by a space, and `&` only when a new
// query parameter follows.
const UNQUOTED_ASSIGNMENT = new RegExp(
  String.raw`(?<pre>${ASSIGN})(?<secret>(?:[^\s"'\x60\\,;.&<>()\[\]{}]|[.,;](?![\s"'\x60.,;]|$)|&(?![A-Za-z0-9_.-]{1,64}=)){1,256})`,
  'gi',
);
// `<apiKey>...</apiKey>` on one line (gitleaks' generic rule takes the element spread over lines).
const XML_ELEMENT = new RegExp(
  String.raw`(?<pre><(?<tag>(?:[A-Za-z_][\w.:-]{0,64}?)?${KEY})>[ \t]{0,16})(?<secret>[^<\s]{1,256})(?=[ \t]{0,16}</\k<tag>>)`,
  'gi',
);

// ---------------------------------------------------------------------------------------------------
// The tables. Order matters: a rule only sees what earlier rules left, so the most specific shapes go
// first (a PEM block before anything that could match inside it, JWTs before the Bearer heuristic that would otherwise claim them as plain bearer tokens, vendor
// tokens before the generic assignments that would report them under a vaguer kind). Vendors whose
// gitleaks rule catches as much (AWS key ids, GitHub, GitLab, Slack, Google, npm, SendGrid, Hugging
// Face, Anthropic) have no rule here: gitleaks' allowlists know their published examples.

export const VENDOR_RULES: readonly Rule[] = [
  {
    kind: 'private_key',
    // The body stops at the next BEGIN, so several unterminated headers cost one pass, not one each.
    pattern:
      /(?<secret>-----BEGIN (?<label>(?:[A-Z0-9]{1,16} ){0,3}PRIVATE KEY(?: BLOCK)?)-----(?:(?!-----BEGIN )[\s\S]){0,65536}?-----END \k<label>-----)/g,
    // `-----BEGIN PRIVATE KEY-----\n...\n-----END PRIVATE KEY-----` in documentation holds no key.
    accept: (block) => /[A-Za-z0-9+/]{32}/.test(block),
  },
  {
    kind: 'private_key',
    // Truncated pastes lose the END line but still leak the key: take the header and the base64 lines
    // after it (newlines may be literal `\n`, as in service-account JSON). Each line must be taken whole,
    // so consecutive lines cannot be split two ways.
    pattern:
      /(?<secret>-----BEGIN (?:[A-Z0-9]{1,16} ){0,3}PRIVATE KEY(?: BLOCK)?-----(?:(?:\r?\n|\\n|[ \t]){0,2}(?:[A-Za-z0-9+/=]{16,16384}(?![A-Za-z0-9+/=])|(?:Proc-Type|DEK-Info): [^\r\n\\]{1,128})){1,1024})/g,
  },
  {
    kind: 'jwt',
    // The signature may be empty (alg "none"), the two dots may not.
    pattern: /(?<![A-Za-z0-9_.-])(?<secret>eyJ[A-Za-z0-9_-]{8,2048}\.[A-Za-z0-9_-]{8,16384}\.[A-Za-z0-9_-]{0,2048})(?![A-Za-z0-9_-])/g,
  },
  {
    kind: 'aws_access_key_id',
    // gitleaks' rule takes the base32 alphabet only; ids pasted from docs and tests often hold 0, 1, 8 or 9, and
    // nothing ordinary looks like AKIA and sixteen capitals and digits. The ids gitleaks takes are left to it.
    pattern: /(?<![A-Za-z0-9])(?<secret>(?:AKIA|ASIA|ABIA|ACCA)[A-Z0-9]{16})(?![A-Za-z0-9])/g,
    accept: (secret) => /[0189]/.test(secret.slice(4)) && !secret.endsWith('EXAMPLE') && shannonEntropy(secret.slice(4)) >= 3,
  },
  {
    kind: 'aws_secret_access_key',
    // 40 base64 characters are everywhere (hashes, ids), so only the assignment context is trusted.
    pattern:
      /(?<pre>(?:aws[_-]?secret(?:[_-]?access)?[_-]?key|secret[_-]?access[_-]?key)\\?["']?[ \t]{0,16}(?::=|=>|[:=])[ \t]{0,16}\\?["']?)(?<secret>[A-Za-z0-9/+]{40})(?![A-Za-z0-9/+=])/gi,
  },
  {
    kind: 'google_oauth_client_secret',
    pattern: /(?<![A-Za-z0-9_-])(?<secret>GOCSPX-[A-Za-z0-9_-]{24,40})(?![A-Za-z0-9_-])/g,
  },
  {
    kind: 'slack_webhook_url',
    // The host stays so the memory still says what the URL was.
    pattern: /(?<pre>hooks\.slack\.com\/(?:services|workflows|triggers)\/)(?<secret>[A-Za-z0-9_/-]{16,250})(?![A-Za-z0-9_/-])/g,
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
    // gitleaks' rule wants a quote, space or end after the key; Stripe's own docs write `-u sk_live_...:`.
    pattern: /(?<![A-Za-z0-9_])(?<secret>[rs]k_(?:live|test|prod)_[A-Za-z0-9]{24,250})(?![A-Za-z0-9_])/g,
    accept: (key) => mixesClasses(key) && !isPlaceholder(key),
  },
  {
    kind: 'stripe_webhook_secret',
    pattern: /(?<![A-Za-z0-9_])(?<secret>whsec_[A-Za-z0-9]{32,250})(?![A-Za-z0-9_])/g,
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
  // LLM providers gitleaks has no rule for (as of the version in gitleaks-rules.ts).
  {
    kind: 'groq_api_key',
    pattern: /(?<![A-Za-z0-9_])(?<secret>gsk_[A-Za-z0-9]{52})(?![A-Za-z0-9_])/g,
    accept: mixesClasses,
  },
  {
    kind: 'openrouter_api_key',
    pattern: /(?<![A-Za-z0-9_-])(?<secret>sk-or-v1-[a-f0-9]{64})(?![A-Za-z0-9_-])/g,
  },
  {
    kind: 'replicate_api_token',
    pattern: /(?<![A-Za-z0-9_])(?<secret>r8_[A-Za-z0-9]{37})(?![A-Za-z0-9_])/g,
    accept: mixesClasses,
  },
  {
    kind: 'xai_api_key',
    pattern: /(?<![A-Za-z0-9_-])(?<secret>xai-[A-Za-z0-9]{80})(?![A-Za-z0-9_-])/g,
    accept: mixesClasses,
  },
  {
    kind: 'service_token',
    // Our own API tokens: `svc_` + base64url of 32 random bytes (see domain/accounts/secrets.ts).
    pattern: /(?<![A-Za-z0-9_-])(?<secret>svc_[A-Za-z0-9_-]{43})(?![A-Za-z0-9_-])/g,
    accept: mixesClasses,
  },
];

// Shapes without a vendor prefix: they run after every vendor rule (ours and gitleaks'), so a vendor token
// in a URL, a header or an assignment is reported under its vendor's kind.
export const HEURISTIC_RULES: readonly Rule[] = [
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
    kind: 'bearer_token',
    // `Authorization: Token <value>` (Django REST framework, GitHub's older form): "Token" alone is an
    // ordinary word, so only in the header.
    pattern:
      /(?<pre>\bAuthorization["']?[ \t]{0,16}[:=][ \t]{0,16}["']?Token[ \t]{1,16})(?<secret>[A-Za-z0-9._~+/-]{15,4095}[A-Za-z0-9_~+/-]={0,2})(?![A-Za-z0-9_~+/=-]|\.[A-Za-z0-9_~+/-])/gi,
    accept: bearerLooksReal,
  },
  {
    kind: 'basic_auth',
    pattern: /(?<pre>\bBasic[ \t]{1,16})(?<secret>[A-Za-z0-9+/]{4,4096}={0,2})(?![A-Za-z0-9+/=])/gi,
    accept: isBasicCredential,
  },
  { kind: 'generic_secret', pattern: QUOTED_ASSIGNMENT, accept: looksLikeSecret },
  { kind: 'generic_secret', pattern: UNQUOTED_ASSIGNMENT, accept: looksLikeSecret },
  { kind: 'generic_secret', pattern: XML_ELEMENT, accept: looksLikeSecret },
];

// A rule's matches as findings: only the `secret` group is replaced, and `accept` may refuse a match.
export function ownFindings(rule: Rule, text: string): Finding[] {
  const findings: Finding[] = [];
  for (const m of text.matchAll(rule.pattern)) {
    const secret = m.groups?.['secret'];
    if (secret === undefined) continue;
    const pre = m.groups?.['pre'] ?? '';
    const start = m.index + pre.length;
    const end = start + secret.length;
    const context = {
      pre,
      after: text.charAt(end),
      following: text.slice(end, end + 3),
      before: text.slice(Math.max(0, m.index - 16), m.index),
    };
    if (rule.accept && !rule.accept(secret, context)) continue;
    findings.push({ start, end, kind: rule.kind });
  }
  return findings;
}
