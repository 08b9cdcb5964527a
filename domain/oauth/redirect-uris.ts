// Where an authorization may send its code: https anywhere, plain http only to this machine (RFC 8252 7.3),
// where nothing travels over a network.
const LOOPBACK = new Set(['127.0.0.1', 'localhost', '[::1]']);

const isLoopback = (url: URL): boolean => url.protocol === 'http:' && LOOPBACK.has(url.hostname);

export function redirectUriProblem(uri: string): string | null {
  const url = URL.parse(uri);
  if (!url) return 'is not an absolute URL';
  if (uri.includes('#')) return 'must not have a fragment';
  if (url.username || url.password) return 'must not carry a user name or password';
  if (url.protocol === 'https:' || isLoopback(url)) return null;
  return 'must be https, or http to a loopback address (127.0.0.1, localhost or [::1])';
}

// Exactly as registered; a loopback URI may name any port, since a native app picks its port when it starts (RFC 8252 7.3).
export function redirectUriMatches(registered: string, presented: string): boolean {
  if (registered === presented) return true;
  const expected = new URL(registered);
  const url = URL.parse(presented);
  if (!url || !isLoopback(expected) || presented.includes('#') || url.username || url.password) return false;
  return (
    url.protocol === expected.protocol &&
    url.hostname === expected.hostname &&
    url.pathname === expected.pathname &&
    url.search === expected.search
  );
}
