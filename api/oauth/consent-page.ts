import { createHash } from 'node:crypto';

// The consent page: plain HTML, no script, every value escaped. Its policy allows its own style and no frame
// (nobody can lay it under a click), and forms posting here, which the browser then follows to the client's
// redirect URI: Chromium checks form-action on that redirect too.
const STYLE = `body{font:16px/1.5 system-ui,sans-serif;color:#1d2330;background:#f6f7f9;margin:0}
main{max-width:30rem;margin:4rem auto;padding:2rem;background:#fff;border:1px solid #d8dce3;border-radius:8px}
h1{font-size:1.35rem;margin:0 0 1rem}p{margin:.6rem 0}.muted{color:#5b6475;font-size:.9rem}
.actions{display:flex;gap:.75rem;margin-top:1.5rem}button{font:inherit;padding:.55rem 1.2rem;border-radius:6px;border:1px solid #1f5fd1;cursor:pointer}
button[value=allow]{background:#1f5fd1;color:#fff}button[value=deny]{background:#fff;color:#1f5fd1}`;
const STYLE_HASH = createHash('sha256').update(STYLE).digest('base64');

const escapeHtml = (text: string): string =>
  text.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);

export const consentPolicy = (redirectUri: string): string =>
  [
    "default-src 'none'",
    `style-src 'sha256-${STYLE_HASH}'`,
    `form-action 'self' ${new URL(redirectUri).origin}`,
    "frame-ancestors 'none'",
    "base-uri 'none'",
  ].join('; ');

export interface Consent {
  clientName: string;
  redirectHost: string;
  orgName: string;
  userEmail: string;
  action: string;
  // The authorization request again, and the org shown, posted back with the decision.
  fields: Record<string, string | undefined>;
}

export function consentPage(consent: Consent): string {
  const hidden = Object.entries(consent.fields)
    .filter((entry): entry is [string, string] => entry[1] !== undefined)
    .map(([name, value]) => `<input type="hidden" name="${escapeHtml(name)}" value="${escapeHtml(value)}">`)
    .join('\n      ');
  const client = escapeHtml(consent.clientName);
  return `<!doctype html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <meta name="viewport" content="width=device-width, initial-scale=1">
  <title>Allow ${client}? · Memory service</title>
  <style>${STYLE}</style>
</head>
<body>
  <main>
    <h1>Allow ${client} to use your memories?</h1>
    <p><strong>${client}</strong> (returning to <strong>${escapeHtml(consent.redirectHost)}</strong>) asks to act as you in the organization <strong>${escapeHtml(consent.orgName)}</strong>: to search, save, change and delete its memories, with your role there.</p>
    <p class="muted">Signed in as ${escapeHtml(consent.userEmail)}. It gets an API token named “OAuth: ${client}”; revoke it on the API tokens page to cut it off.</p>
    <form method="post" action="${escapeHtml(consent.action)}">
      ${hidden}
      <div class="actions">
        <button type="submit" name="decision" value="allow">Allow</button>
        <button type="submit" name="decision" value="deny">Deny</button>
      </div>
    </form>
  </main>
</body>
</html>
`;
}
