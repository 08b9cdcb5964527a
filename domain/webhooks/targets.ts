import ipaddr from 'ipaddr.js';
import { lookup } from 'node:dns/promises';

// Only public unicast addresses may receive webhooks: loopback, private, link-local, carrier-grade NAT,
// multicast, reserved and unspecified ranges (and their IPv4-mapped IPv6 forms) are refused.
export function isPublicAddress(address: string): boolean {
  if (!ipaddr.isValid(address)) return false;
  let ip = ipaddr.parse(address);
  if (ip.kind() === 'ipv6' && (ip as ipaddr.IPv6).isIPv4MappedAddress()) ip = (ip as ipaddr.IPv6).toIPv4Address();
  return ip.range() === 'unicast';
}

export type TargetCheck = { ok: true; addresses: string[] } | { ok: false; reason: string };

// Resolves the URL's host and checks every address it resolves to, so a name cannot point at a private
// address; delivery checks again at connection time (DNS can change between the two).
export async function checkTarget(url: string, allowPrivate: boolean): Promise<TargetCheck> {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return { ok: false, reason: 'not a URL' };
  }
  if (parsed.protocol !== 'https:' && parsed.protocol !== 'http:')
    return { ok: false, reason: 'only http and https URLs can receive webhooks' };
  if (parsed.username || parsed.password) return { ok: false, reason: 'credentials in the URL are not allowed' };
  const host = parsed.hostname.replace(/^\[|\]$/g, '');
  let addresses: string[];
  try {
    addresses = ipaddr.isValid(host) ? [host] : (await lookup(host, { all: true, verbatim: true })).map((a) => a.address);
  } catch {
    return { ok: false, reason: `the host ${host} does not resolve` };
  }
  if (!allowPrivate) {
    const blocked = addresses.find((a) => !isPublicAddress(a));
    if (blocked) return { ok: false, reason: `the host resolves to ${blocked}, a loopback, private or otherwise non-public address` };
  }
  return { ok: true, addresses };
}
