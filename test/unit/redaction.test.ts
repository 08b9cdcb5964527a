import { Buffer } from 'node:buffer';
import { createHash, randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { issueSecret } from '../../domain/accounts/secrets.ts';
import { REDACTION_KINDS, redactSecrets } from '../../domain/memories/redaction/redact.ts';
import { corpus } from '../support/redaction-corpus.ts';

// Every fake secret is assembled at run time from pieces, so this file never holds a literal that a
// secret scanner (or a push-protection hook) would flag.

const b64 = (s: string): string => Buffer.from(s).toString('base64');
// Issued keys are random; a repeated pattern is what gitleaks' entropy thresholds (rightly) take for a
// placeholder. A seeded generator keeps the values random-looking and the test deterministic.
let seed = 0x5eed;
const ALNUM = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';
const rand = (length: number, alphabet = ALNUM): string =>
  Array.from({ length }, () => {
    seed = (Math.imul(seed, 1103515245) + 12345) >>> 0;
    return alphabet[(seed >>> 8) % alphabet.length];
  }).join('');
const b64url = (s: string): string => Buffer.from(s).toString('base64url');
const PK = 'PRIVATE' + ' KEY';
const pemBody = (seed: string): string => [seed.repeat(16), seed.repeat(16), seed.slice(0, 3).repeat(7) + '=='].join('\n');

const AWS_ID_1 = 'AKIA' + rand(16, 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567');
const AWS_ID_2 = 'ASIA' + rand(16, 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567');
const AWS_SECRET_1 = 'wJalrXu7' + 'K/Mn+P9q'.repeat(4);
const AWS_SECRET_2 = 'Zq9' + 'x8W7v6U5t4'.repeat(3) + 'Rs3/Q+p';
const GOOGLE_1 = 'AIza' + 'Sy' + rand(15) + '-' + rand(8) + '_' + rand(8);
const GOOGLE_2 = 'AIza' + 'SyD' + rand(32);
const GOCSPX_1 = 'GOCSPX' + '-' + 'aB3d_E5f-G7h'.repeat(2) + 'Ij9k';
const GOCSPX_2 = 'GOCSPX' + '-' + 'Zy8Xw7Vu6Ts5'.repeat(2) + 'Rq4P';
const GH_1 = 'ghp_' + rand(36);
const GH_2 = 'gho_' + rand(36);
const GH_3 = 'github_' + 'pat_' + '11AB2CD3E' + rand(13) + '_' + rand(59);
const GL_1 = 'glpat' + '-' + rand(8) + '_' + rand(5) + '-' + rand(5);
const GL_2 = 'glpat' + '-' + rand(20);
const SLACK_1 = 'xoxb' + '-' + rand(12, '0123456789') + '-' + rand(13, '0123456789') + '-' + rand(24);
const SLACK_2 =
  'xoxp' + '-' + rand(10, '0123456789') + '-' + rand(10, '0123456789') + '-' + rand(10, '0123456789') + '-' + rand(32, 'abcdef0123456789');
const HOOK_1 = 'T0' + '1ABCDEFG/B0' + '2HIJKLMN/' + 'aBcDeFgHiJkLmNoPqRsTuVwX';
const HOOK_2 = 'T9' + 'ZYXWVUT/B8' + 'QPONMLK/' + 'zYxWvUtSrQpOnMlKjIhGfEdC';
const DISCORD_1 = 'MTA' + 'xMjM0NTY3ODkwMTIzNDU2Nz' + '.' + 'GhIjKl' + '.' + 'aB3_cD4-eF5gH6iJ7kL8mN9oP0qRs';
const DISCORD_2 = 'ODk' + '4NzY1NDMyMTA5ODc2NTQz' + '.' + 'Yx_w-V' + '.' + 'Zz9Yy8Xx7Ww6Vv5Uu4Tt3Ss2Rr1Qq0';
const TELEGRAM_1 = '123456789' + ':AA' + 'Fk3_jd8Hq-L'.repeat(3);
const TELEGRAM_2 = '7012345678' + ':AA' + 'Hq2-Zx9_Wv8'.repeat(3);
const STRIPE_1 = 'sk_' + 'live_' + '51Hx' + 'Ab12Cd34'.repeat(3);
const STRIPE_2 = 'rk_' + 'test_' + 'Qw9Er8Ty7Ui6'.repeat(2);
const WHSEC_1 = 'whsec' + '_' + 'Ab1Cd2Ef'.repeat(4);
const WHSEC_2 = 'whsec' + '_' + 'z9Y8x7W6v5U4'.repeat(3);
const ANT_1 = 'sk-' + 'ant-' + 'api03-' + rand(40) + '_' + rand(30) + '-' + rand(21) + 'AA';
const ANT_2 = 'sk-' + 'ant-' + 'admin01-' + rand(93) + 'AA';
const OAI_1 = 'sk-' + 'proj-' + 'Ab1Cd2_Ef3-Gh4'.repeat(10);
const OAI_2 = 'sk-' + 'Ab1Cd2Ef3Gh4'.repeat(4);
const LETTERS = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
const HF_1 = 'hf_' + rand(34, LETTERS);
const HF_2 = 'hf_' + rand(34, LETTERS);
const NPM_1 = 'npm_' + rand(36);
const NPM_2 = 'npm_' + rand(36);
const SG_1 = 'SG' + '.' + rand(22) + '.' + rand(43);
const SG_2 = 'SG' + '.' + rand(10) + '_' + rand(11) + '.' + rand(20) + '-' + rand(22);
// Shapes issue 15 found missed before gitleaks' rules ran.
const HF_ORG = 'api_' + 'org_' + rand(34, LETTERS);
const GLOAS = 'gloas' + '-' + rand(64);
const GLAGENT = 'glagent' + '-' + rand(50);
const AWS_ID_ABIA = 'ABIA' + rand(16, 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567');
// Outside base32 (gitleaks' alphabet): an id with 0, 1, 8 or 9 in it.
const AWS_ID_DIGITS = 'AKIA' + 'Q8ZK1W9RT0MPLX4N';
const STRIPE_PROD = 'sk_' + 'prod_' + rand(32);
const GROQ_1 = 'gsk_' + rand(52);
const GROQ_2 = 'gsk_' + rand(52);
const OPENROUTER_1 = 'sk-' + 'or-v1-' + rand(64, '0123456789abcdef');
const OPENROUTER_2 = 'sk-' + 'or-v1-' + rand(64, '0123456789abcdef');
const REPLICATE_1 = 'r8_' + rand(37);
const REPLICATE_2 = 'r8_' + rand(37);
const XAI_1 = 'xai-' + rand(80);
const XAI_2 = 'xai-' + rand(80);
const SVC_1 = 'svc_' + 'Ab1-Cd2_Ef3'.repeat(3) + 'Gh4Ij5Kl6M';
const SVC_2 = issueSecret().raw;
const JWT_1 =
  b64url('{"alg":"HS256","typ":"JWT"}') +
  '.' +
  b64url('{"sub":"1234567890","name":"Ada"}') +
  '.' +
  'Sfl' +
  'KxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c';
const JWT_2 = b64url('{"alg":"none"}') + '.' + b64url('{"admin":true,"iat":1700000000}') + '.';
const JWT_3 =
  b64url('{"alg":"RS256","kid":"k1"}') + '.' + b64url('{"iss":"https://issuer.test","exp":1900000000}') + '.' + 'Q9w8E7r6T5y4'.repeat(20);
const PEM_RSA = '-----BEGIN RSA ' + PK + '-----\n' + pemBody('MIIEpAIBAAKC') + '\n-----END RSA ' + PK + '-----';
const PEM_OPENSSH = '-----BEGIN OPENSSH ' + PK + '-----\n' + pemBody('b3BlbnNzaC1r') + '\n-----END OPENSSH ' + PK + '-----';
const PEM_EC = '-----BEGIN EC ' + PK + '-----\n' + pemBody('MHcCAQEEIBkg') + '\n-----END EC ' + PK + '-----';
const PEM_ENCRYPTED = '-----BEGIN ENCRYPTED ' + PK + '-----\n' + pemBody('MIIFHDBOBgkq') + '\n-----END ENCRYPTED ' + PK + '-----';
const PEM_PLAIN_ESCAPED = '-----BEGIN ' + PK + '-----\\n' + pemBody('MIIEvQIBADAN').replaceAll('\n', '\\n') + '\\n-----END ' + PK + '-----';
const PEM_TRUNCATED = '-----BEGIN RSA ' + PK + '-----\n' + 'MIIEowIBAAKC'.repeat(5) + 'AQEA\n' + 'x9Y8w7V6u5T4'.repeat(5) + 'ab12';
const BASIC_1 = b64('ada:Analyt1cal-Engine');
const BASIC_2 = b64('svc-user:pa55w0rd!');
const BEARER_1 = 'opaque' + 'Tok3n' + '9f8e7d6c5b4a3210';
const DB_PASSWORD = 'Pg5q9' + 'Zt!x';
const BEARER_2 = 'ya29' + '.' + 'a0AfH6SMB' + 'x7Yq_Wv-Ut8'.repeat(3);

interface Case {
  kind: string;
  secret: string;
  text: string;
}

const caseOf = (kind: string, secret: string, wrap: (secret: string) => string): Case => ({ kind, secret, text: wrap(secret) });

const CATCH: Case[] = [
  caseOf('private_key', PEM_RSA, (s) => `Here is the deploy key, don't share it:\n${s}\nThanks!`),
  caseOf('private_key', PEM_OPENSSH, (s) => `$ cat ~/.ssh/id_ed25519\n${s}\n$ ssh-add ~/.ssh/id_ed25519`),
  caseOf('private_key', PEM_EC, (s) => `key.pem:\n\n${s}\n\ncert.pem is next.`),
  caseOf('private_key', PEM_ENCRYPTED, (s) => `openssl pkcs8 output:\n${s}`),
  caseOf(
    'private_key',
    PEM_PLAIN_ESCAPED,
    (s) => `{"type": "service_account", "private_key": "${s}\\n", "client_email": "bot@proj.iam.gserviceaccount.com"}`,
  ),
  caseOf('private_key', PEM_TRUNCATED, (s) => `The agent pasted a cut-off key:\n${s}\n\nand then the log ended.`),

  caseOf('aws_access_key_id', AWS_ID_1, (s) => `export AWS_ACCESS_KEY_ID=${s}`),
  caseOf('aws_access_key_id', AWS_ID_2, (s) => `{"Credentials": {"AccessKeyId": "${s}", "Expiration": "2030-01-01T00:00:00Z"}}`),
  caseOf('aws_access_key_id', AWS_ID_1, (s) => `The CI user's access key is ${s}, rotate it next week.`),
  caseOf('aws_secret_access_key', AWS_SECRET_1, (s) => `[default]\naws_secret_access_key = ${s}\nregion = eu-west-1`),
  caseOf('aws_secret_access_key', AWS_SECRET_2, (s) => `{"SecretAccessKey": "${s}", "SessionToken": null}`),
  caseOf('aws_secret_access_key', AWS_SECRET_1, (s) => `AWS_SECRET_ACCESS_KEY=${s} aws s3 ls`),

  caseOf('google_api_key', GOOGLE_1, (s) => `curl "https://maps.googleapis.com/maps/api/geocode/json?address=Paris&key=${s}"`),
  caseOf('google_api_key', GOOGLE_2, (s) => `firebaseConfig = { apiKey: "${s}", authDomain: "demo.firebaseapp.com" };`),
  caseOf('google_oauth_client_secret', GOCSPX_1, (s) => `GOOGLE_CLIENT_SECRET=${s}`),
  caseOf(
    'google_oauth_client_secret',
    GOCSPX_2,
    (s) => `{"web": {"client_id": "1234-abc.apps.googleusercontent.com", "client_secret": "${s}"}}`,
  ),

  caseOf('github_token', GH_1, (s) => `git remote set-url origin https://${s}@github.com/acme/app.git`),
  caseOf('github_token', GH_2, (s) => `The OAuth app returned ${s} as the access token.`),
  caseOf('github_token', GH_3, (s) => `gh auth login --with-token <<< ${s}`),
  caseOf('github_token', GH_1, (s) => `curl -H "Authorization: token ${s}" https://api.github.com/user`),
  caseOf('gitlab_token', GL_1, (s) => `git clone https://oauth2:${s}@gitlab.com/acme/infra.git`),
  caseOf('gitlab_token', GL_2, (s) => `curl --header "PRIVATE-TOKEN: ${s}" https://gitlab.com/api/v4/projects`),

  caseOf('slack_token', SLACK_1, (s) => `SLACK_BOT_TOKEN=${s}`),
  caseOf('slack_token', SLACK_2, (s) => `The user token ${s} belongs to the #ops workspace.`),
  caseOf('slack_webhook_url', HOOK_1, (s) => `curl -X POST -d '{"text":"deployed"}' https://hooks.slack.com/services/${s}`),
  caseOf('slack_webhook_url', HOOK_2, (s) => `alerts:\n  slack_url: "https://hooks.slack.com/services/${s}"\n  channel: "#alerts"`),

  caseOf('discord_bot_token', DISCORD_1, (s) => `client.login('${s}'); // the bot`),
  caseOf('discord_bot_token', DISCORD_2, (s) => `DISCORD_TOKEN="${s}"`),
  caseOf('telegram_bot_token', TELEGRAM_1, (s) => `curl https://api.telegram.org/bot${s}/getUpdates`),
  caseOf('telegram_bot_token', TELEGRAM_2, (s) => `BotFather says: Use this token to access the HTTP API: ${s}`),

  caseOf('stripe_key', STRIPE_1, (s) => `curl https://api.stripe.com/v1/charges -u ${s}:`),
  caseOf('stripe_key', STRIPE_2, (s) => `stripe:\n  restricted_key: ${s}\n  mode: test`),
  caseOf('stripe_webhook_secret', WHSEC_1, (s) => `STRIPE_WEBHOOK_SECRET=${s}`),
  caseOf('stripe_webhook_secret', WHSEC_2, (s) => `The endpoint's signing secret is ${s}.`),

  caseOf('anthropic_api_key', ANT_1, (s) => `export ANTHROPIC_API_KEY=${s}`),
  caseOf('anthropic_api_key', ANT_2, (s) => `curl https://api.anthropic.com/v1/messages -H "x-api-key: ${s}"`),
  caseOf('openai_api_key', OAI_1, (s) => `client = OpenAI(api_key="${s}")`),
  caseOf('openai_api_key', OAI_2, (s) => `My old key was ${s} but I revoked it.`),

  caseOf('huggingface_token', HF_ORG, (s) => `HF_ORG_TOKEN="${s}"`),
  caseOf('gitlab_token', GLOAS, (s) => `gitlab_oauth:\n  secret: ${s}`),
  caseOf('gitlab_token', GLAGENT, (s) => `helm install agent --set config.token=${s}`),
  caseOf('aws_access_key_id', AWS_ID_ABIA, (s) => `The STS key ${s} expired.`),
  caseOf('aws_access_key_id', AWS_ID_DIGITS, (s) => `aws_access_key_id = ${s}`),
  caseOf('aws_access_key_id', AWS_ID_DIGITS, (s) => `The test user's key is ${s}.`),
  caseOf('stripe_key', STRIPE_PROD, (s) => `STRIPE_SECRET_KEY=${s}`),
  caseOf('basic_auth', 'deploy:Wq8-zLp3_Vn7', (s) => `curl -u ${s} https://ci.example.com/job/build`),
  caseOf('generic_secret', 'mB7xQ2vK9pL4wZ8n', (s) => `https://api.example.com/v2/items?api_key=${s}`),
  caseOf('generic_secret', 'Hq3Lw9Xz2Vb8Nk5R', (s) => `API_KEY ?= ${s}`),
  caseOf('generic_secret', 'Pz6Yt1Rw4Qs9Lm3K', (s) => `var apiToken string = "${s}"`),

  caseOf('groq_api_key', GROQ_1, (s) => `export GROQ_API_KEY=${s}`),
  caseOf('groq_api_key', GROQ_2, (s) => `client = Groq(api_key="${s}")`),
  caseOf('openrouter_api_key', OPENROUTER_1, (s) => `curl https://openrouter.ai/api/v1/chat/completions -H "Authorization: Bearer ${s}"`),
  caseOf('openrouter_api_key', OPENROUTER_2, (s) => `OPENROUTER_API_KEY=${s}`),
  caseOf('replicate_api_token', REPLICATE_1, (s) => `export REPLICATE_API_TOKEN=${s}`),
  caseOf('replicate_api_token', REPLICATE_2, (s) => `The Replicate token ${s} runs the image model.`),
  caseOf('xai_api_key', XAI_1, (s) => `XAI_API_KEY="${s}"`),
  caseOf('xai_api_key', XAI_2, (s) => `curl https://api.x.ai/v1/chat/completions -H "Authorization: Bearer ${s}"`),

  caseOf('huggingface_token', HF_1, (s) => `huggingface-cli login --token ${s}`),
  caseOf('huggingface_token', HF_2, (s) => `{"hf_token": "${s}"}`),
  caseOf('npm_token', NPM_1, (s) => `//registry.npmjs.org/:_authToken=${s}`),
  caseOf('npm_token', NPM_2, (s) => `NPM_TOKEN=${s} npm publish`),
  caseOf('sendgrid_api_key', SG_1, (s) => `SENDGRID_API_KEY='${s}'`),
  caseOf('sendgrid_api_key', SG_2, (s) => `The mailer uses ${s} for transactional mail.`),

  caseOf('jwt', JWT_1, (s) => `curl -H "Authorization: Bearer ${s}" https://api.example.com/me`),
  caseOf('jwt', JWT_2, (s) => `Set-Cookie: session=${s}; HttpOnly; Secure`),
  caseOf('jwt', JWT_3, (s) => `{"id_token": "${s}", "expires_in": 3600}`),

  caseOf('url_credentials', DB_PASSWORD, (s) => `DATABASE_URL=postgres://app:${s}@db.internal:5432/app`),
  caseOf('url_credentials', 'hunter2', (s) => `Open https://admin:${s}@intranet.example.com/dashboard to see it.`),
  caseOf('url_credentials', 'p@ss:w0rd', (s) => `mongodb+srv://reporting:${s}@cluster0.mongodb.net/prod?retryWrites=true`),
  caseOf('url_credentials', 'R3d1s-pw', (s) => `REDIS_URL="redis://:${s}@cache:6379/0"`),

  caseOf('service_token', SVC_1, (s) => `curl -H "Authorization: Bearer ${s}" https://mem.example.com/v1/memories`),
  caseOf('service_token', SVC_2, (s) => `MEMORY_API_TOKEN=${s}`),

  caseOf('bearer_token', BEARER_1, (s) => `curl -H 'Authorization: Bearer ${s}' https://api.example.com`),
  caseOf('bearer_token', BEARER_2, (s) => `headers = {"Authorization": "bearer ${s}"}`),
  caseOf('bearer_token', BEARER_1, (s) => `Send the request with Bearer ${s}.`),

  caseOf('bearer_token', BEARER_1, (s) => `requests.get(url, headers={"Authorization": "Token ${s}"})`),

  caseOf('basic_auth', BASIC_1, (s) => `curl -H "Authorization: Basic ${s}" https://ci.example.com/api/json`),
  caseOf('basic_auth', BASIC_2, (s) => `Proxy-Authorization: basic ${s}\r\nHost: proxy.internal`),

  caseOf('generic_secret', 'Tr0ub4dor&3xq', (s) => `# .env\nDB_PASSWORD=${s}\nDB_HOST=localhost`),
  caseOf('generic_secret', 'cS3cr3t-9f8e7d6c', (s) => `{"client_id": "web", "client_secret": "${s}"}`),
  caseOf('generic_secret', 'k3y-Zq8Lm2Np', (s) => `service:\n  api_key: ${s}\n  timeout: 30`),
  caseOf('generic_secret', 'Sup3r-S4fe!', (s) => `mysqldump --user=root --password=${s} prod > dump.sql`),
  caseOf('generic_secret', 'abcDEF123456', (s) => `Callback was https://app.example.com/cb?state=xyz&token=${s}&page=2`),
  caseOf('generic_secret', 'correcthorsebatterystaple', (s) => `The wifi password: ${s}. Don't forget it.`),
  caseOf('generic_secret', 'd7f3K9m2Q8', (s) => `SECRET_KEY = '${s}'`),
  caseOf('generic_secret', 'q7Xv2LmN9pR4sT8w', (s) => `<settings><apiKey>${s}</apiKey><region>eu</region></settings>`),
  caseOf('generic_secret', 'Zk4-Wq9_Lp2!', (s) => `API_KEY ::= "${s}"`),
  caseOf('generic_secret', 'Rt5yUi8oPq2w', (s) => `props.setProperty("password", "${s}");`),
];

const LOOK_ALIKES: string[] = [
  // digests, ids, encodings
  createHash('sha1').update('memory').digest('hex'),
  `sha256: ${createHash('sha256').update('memory').digest('hex')}`,
  'Fixed in commit 3f786850e387550fdab836ed7e6dc881de23001b (see git show 3f78685).',
  `request ${randomUUID()} and 123e4567-e89b-12d3-a456-426614174000 both failed`,
  Buffer.from('hello world, this is fine').toString('base64'),
  `payload=${b64('{"user":"ada","items":[1,2,3]}')}`,
  'checksum: ' + 'wJalrXu7' + 'K/Mn+P9q'.repeat(4),
  'data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==',
  b64url('{"alg":"HS256"}') + ' is just a header without a token',
  // prose
  'The session token expires after thirty minutes, and the password policy requires twelve characters. ' +
    'Secrets are stored in the vault; every API key is rotated quarterly. The key insight from the ' +
    'retrospective was that the task-force should own the rollout, not the platform team. Basic ' +
    'authentication is described in RFC 7617 and bearer tokens in RFC 6750.',
  'We planned the task-force meeting after the sk-8 ski trip.',
  'He was the Bearer of bad news.',
  'basic authentication is described in RFC 7617',
  'Basic ' + b64('hello world'),
  'risk-averse desk-lamp whisk-broom kiosk-mode',
  'My secret: everything. The password: hunter2. token: expired',
  // URLs without credentials, emails
  'https://example.com/a?b=c',
  'postgres://localhost:5432/db',
  'https://user@example.com/path and ssh://git@github.com/acme/app.git',
  'git@github.com:acme/app.git',
  'Mail ada.lovelace@example.com or bob+tag@sub.example.org',
  'https://hooks.slack.com/ is where webhooks live',
  // versions, paths, packages, identifiers
  'Upgraded to 1.2.3-beta.4+build.5, node v24.21.0 and typescript@5.9.2',
  '/usr/local/lib/node_modules/typescript/lib/tsc.js and C:\\Users\\ada\\secrets.txt',
  '@mikro-orm/postgresql @temporalio/workflow eslint-plugin-react-hooks',
  'hf_hub_download(npm_config_registry, gh_pages, svc_session, sk_live_mode, xoxb-token-format)',
  'arn:aws:iam::123456789012:role/Admin',
  // the false positives issue 15 found: a Maven coordinate and an Objective-C selector
  'implementation "io.jsonwebtoken:jjwt-api:0.12.3"',
  'notes = "Maven - io.jsonwebtoken:jjwt-jackson-0.11.2"',
  '- (id)hf_requiredCharacteristicTypesForDisplayMetadata;',
  // documented examples and masked values
  'aws_access_key_id = AKIAIOSFODNN7EXAMPLE',
  'key = AKIAXXXXXXXXXXXXXXXX',
  'key = AKIA0000000000000000',
  '-----BEGIN PRIVATE KEY-----\nanything\n-----END PRIVATE KEY-----',
  'export OP_SERVICE_ACCOUNT_TOKEN=ops_eyJzaWduSW5BZGRyZXNzIjoiaHR0cHM6...',
  'csrf-token=Mj2qykJO5rELyHgezQ69nzUX0i3OH67V7+V4eUrLfpuyOuxmiW9rhROG/Whikle15syazJOkrjJa3U2AbhIvUw==',
  'publicToken = "9Cnzj4p4WGeKLs1Pt8QuKUpRKfFLfRYC9AIKjbJTWit"',
  '<publicKey>9Cnzj4p4WGeKLs1Pt8QuKUpRKfFLfRYC9AIKjbJTWit</publicKey>',
  'The Authorization: Token header carries it; Token expired at noon.',
  // placeholders are not secrets
  'API_KEY=<your-key-here>',
  'password=changeme',
  'PASSWORD=change_me',
  'password: ********',
  'SECRET_KEY=${SECRET_KEY}',
  'DB_PASSWORD=$DB_PASSWORD',
  'token: xxxxxxxxxxxxxxxx',
  '{"api_key": "YOUR_API_KEY_HERE", "password": "<password>"}',
  'export OPENAI_API_KEY=sk-...',
  'Authorization: Bearer <token>',
  'Authorization: Bearer $TOKEN',
  'Authorization: Bearer YOUR_ACCESS_TOKEN_HERE',
  'postgres://postgres:password@localhost:5432/app',
  'https://ci:${GITHUB_TOKEN}@github.com/acme/app.git',
  'DATABASE_URL=postgres://memsvc:memsvc@127.0.0.1:5432/memsvc',
  // code that merely mentions the keys
  'const token = await getToken();',
  'api_key = os.environ["OPENAI_API_KEY"]',
  'interface Login { password: string | undefined; token: TokenResponse }',
  'secret = process.env.WEBHOOK_SECRET',
  'max_tokens=100000000 token_count: 12345678',
  'PASSWORD_FILE=/run/secrets/db_password',
  'let nextPageToken: Uint8Array | undefined = undefined;',
  'exports.encodeOperationToken = encodeOperationToken;',
  'const cancellationToken = createCancellationToken(sys.args);',
  'let cleanup_token = WorkflowCancellationToken::new();',
  'resolve({ token: activation.operationToken!, result });',
  'const taskToken = task.task?.taskToken || task.cancelTask?.taskToken;',
  'kind: Secret\nmetadata:\n  name: app\nsecret: db-credentials-store',
  // numbers, markdown, public PEM blocks
  '3.14159 2.71828 6.02214076e23 1234567890123456789',
  '# Notes\n\n- item one\n- [link](https://example.com/docs?page=2)\n\n```ts\nconst x = 1;\n```\n\n> quote',
  '-----BEGIN CERTIFICATE-----\n' + pemBody('MIIDdzCCAl+g') + '\n-----END CERTIFICATE-----',
  '-----BEGIN PUBLIC KEY-----\n' + pemBody('MIIBIjANBgkq') + '\n-----END PUBLIC KEY-----',
];

describe('redactSecrets: secrets that must be caught', () => {
  it.each(CATCH.map((c, i) => [`${c.kind} #${i}`, c] as const))('%s', (_name, { kind, secret, text }) => {
    const marker = `[REDACTED:${kind}]`;
    const occurrences = text.split(secret).length - 1;
    expect(occurrences).toBeGreaterThan(0);

    const result = redactSecrets(text);
    expect(result.text).not.toContain(secret);
    expect(result.text).toContain(marker);
    expect(result.text).toBe(text.split(secret).join(marker));
    expect(result.count).toBe(occurrences);
    expect(result.kinds).toEqual([kind]);
  });

  it('has cases for every kind the module can emit (two here for each of ours, else gitleaks samples), and no others', () => {
    const corpusCases = (kind: string) =>
      corpus.rules.filter((r) => r.kind === kind && !r.notRun).reduce((n, r) => n + r.truePositives.length, 0);
    for (const kind of REDACTION_KINDS) {
      const here = CATCH.filter((c) => c.kind === kind).length;
      if (here > 0) expect(here, kind).toBeGreaterThanOrEqual(2);
      else expect(corpusCases(kind), kind).toBeGreaterThanOrEqual(1);
    }
    for (const c of CATCH) expect(REDACTION_KINDS).toContain(c.kind);
  });

  it('lists its kinds once each, sorted, in snake_case', () => {
    expect([...REDACTION_KINDS]).toEqual([...new Set(REDACTION_KINDS)].sort());
    for (const kind of REDACTION_KINDS) expect(kind).toMatch(/^[a-z][a-z0-9_]*$/);
  });
});

describe('redactSecrets: the families issue 15 asked for', () => {
  it('has a kind for each', () => {
    const families = [
      'cohere_api_token',
      'perplexity_api_key',
      'groq_api_key',
      'openrouter_api_key',
      'replicate_api_token',
      'xai_api_key',
      'aws_amazon_bedrock_api_key_long_lived',
      'azure_ad_client_secret',
      'digitalocean_pat',
      'cloudflare_api_key',
      'heroku_api_key',
      'vault_service_token',
      'onepassword_service_account_token',
      'bitbucket_client_secret',
      'pypi_upload_token',
      'rubygems_api_token',
      'jfrog_api_key',
      'microsoft_teams_webhook',
      'twilio_api_key',
      'square_access_token',
      'shopify_access_token',
      'plaid_secret_key',
      'sentry_user_token',
      'grafana_service_account_token',
      'databricks_api_token',
      'notion_api_token',
      'linear_api_key',
    ];
    for (const kind of families) expect(REDACTION_KINDS, kind).toContain(kind);
  });
});

describe('redactSecrets: look-alikes that must be left alone', () => {
  it.each(LOOK_ALIKES.map((text, i) => [i, text] as const))('#%i', (_i, text) => {
    expect(redactSecrets(text)).toEqual({ text, count: 0, kinds: [] });
  });
});

describe('redactSecrets: mixed content', () => {
  it('counts every replacement and lists each kind once, sorted', () => {
    const text = [
      `Token for CI: ${GH_1}`,
      `aws configure set aws_access_key_id ${AWS_ID_1}`,
      `Authorization: Bearer ${JWT_1}`,
      `DATABASE_URL=postgres://app:${DB_PASSWORD}@db:5432/app`,
      `Backup token: ${GH_2}`,
      PEM_RSA,
    ].join('\n');
    const result = redactSecrets(text);
    expect(result.count).toBe(6);
    expect(result.kinds).toEqual(['aws_access_key_id', 'github_token', 'jwt', 'private_key', 'url_credentials']);
    for (const secret of [GH_1, GH_2, AWS_ID_1, JWT_1, DB_PASSWORD, PEM_RSA]) expect(result.text).not.toContain(secret);
    expect(result.text).toContain('Authorization: Bearer [REDACTED:jwt]');
    expect(result.text).toContain('postgres://app:[REDACTED:url_credentials]@db:5432/app');
  });

  it('reports a token inside a URL or an assignment under its specific kind, once', () => {
    expect(redactSecrets(`https://x-access-token:${GH_1}@github.com/acme/app.git`)).toEqual({
      text: 'https://x-access-token:[REDACTED:github_token]@github.com/acme/app.git',
      count: 1,
      kinds: ['github_token'],
    });
    expect(redactSecrets(`OPENAI_API_KEY="${OAI_2}"`).kinds).toEqual(['openai_api_key']);
    expect(redactSecrets(`{"private_key": "${PEM_RSA.replaceAll('\n', '\\n')}"}`)).toEqual({
      text: '{"private_key": "[REDACTED:private_key]"}',
      count: 1,
      kinds: ['private_key'],
    });
  });

  it('returns the input untouched when there is nothing to redact', () => {
    const text = 'Remember: the standup moved to 10:30.';
    const result = redactSecrets(text);
    expect(result.text).toBe(text);
    expect(result).toEqual({ text, count: 0, kinds: [] });
  });
});

describe('redactSecrets: idempotence', () => {
  it.each(CATCH.map((c, i) => [`${c.kind} #${i}`, c] as const))('re-redacting %s changes nothing', (_name, { text }) => {
    const once = redactSecrets(text).text;
    expect(redactSecrets(once)).toEqual({ text: once, count: 0, kinds: [] });
  });

  it('leaves markers alone wherever they sit', () => {
    for (const kind of REDACTION_KINDS) {
      const text = [
        `[REDACTED:${kind}]`,
        `password=[REDACTED:${kind}]`,
        `"secret": "[REDACTED:${kind}]"`,
        `postgres://u:[REDACTED:${kind}]@h/db`,
        `Authorization: Bearer [REDACTED:${kind}]`,
        `Basic [REDACTED:${kind}]`,
      ].join('\n');
      expect(redactSecrets(text)).toEqual({ text, count: 0, kinds: [] });
    }
  });
});

describe('redactSecrets: adversarial input', () => {
  const SIZE = 256 * 1024;
  const fill = (unit: string): string => unit.repeat(Math.ceil(SIZE / unit.length)).slice(0, SIZE);
  const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/';
  const noise = Array.from({ length: SIZE }, (_, i) => alphabet[(i * 7919 + (i >> 3)) % 64]).join('');

  const inputs: Record<string, string> = {
    'a run': fill('a'),
    'dash run': fill('-'),
    'equals run': fill('='),
    'whitespace run': fill(' \n\t'),
    'base64 noise': noise,
    'repeated eyJ': fill('eyJ'),
    'dotted eyJ': fill('eyJaaaaaaaa.'),
    'repeated sk-': fill('sk-'),
    'repeated sk-ant-': fill('sk-ant-'),
    'repeated ghp_': fill('ghp_'),
    'repeated AKIA': fill('AKIA'),
    'unterminated PEM headers': fill('-----BEGIN ' + PK + '-----\n'),
    'PEM header then junk': '-----BEGIN RSA ' + PK + '-----' + fill('a-'),
    'PEM header then one huge base64 line': '-----BEGIN ' + PK + '-----\n' + fill('QUJD'),
    'PEM header then thousands of lines': '-----BEGIN ' + PK + '-----\n' + fill('QUJDRA'.repeat(10) + '\n'),
    'repeated password=': fill('password='),
    'repeated secret: "': fill('secret: "'),
    'query-string soup': fill('token=a&'),
    'Bearer run': fill('Bearer '),
    'Bearer then a huge token': 'Bearer ' + fill('A'),
    'Basic then huge base64': 'Basic ' + fill('YTpi'),
    'URL prefixes': fill('https://a:'),
    'at signs after userinfo': 'https://u:' + fill('@'),
    'telegram-ish': fill('123456789:AA'),
    'discord-ish': fill('M' + 'a'.repeat(24) + '.abcdef.'),
    'mixed punctuation': fill('a-=_.:/@+ '),
    // gitleaks' patterns, written for a linear-time engine: identifiers, curl flags, generic assignments
    'repeated okta_': fill('okta_'),
    'repeated vendor identifier assignments': fill('bedrock-api-key-= '),
    'generic assignment soup': fill('api_key=abcdefghij1234567890 '),
    'curl then thousands of -u': 'curl ' + fill(' -u a:bcd'),
    'thousands of curl -H': fill('curl -H "Authorization: Bearer abcdefgh12" '),
    'curl with no flag on a huge line': fill('curl '),
  };

  it.each(Object.entries(inputs))('handles 256 KB of %s', (_name, input) => {
    const result = redactSecrets(input);
    expect(result.count).toBeGreaterThanOrEqual(0);
    expect(result.kinds.every((kind) => REDACTION_KINDS.includes(kind))).toBe(true);
  });
});
