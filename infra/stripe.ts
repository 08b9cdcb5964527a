import Stripe from 'stripe';

// The processor's client; STRIPE_API_BASE points it elsewhere (a local stripe-mock in tests).
export function createStripe(secretKey: string, apiBase: string | undefined): Stripe {
  if (!apiBase) return new Stripe(secretKey);
  const base = new URL(apiBase);
  return new Stripe(secretKey, {
    host: base.hostname,
    port: base.port || (base.protocol === 'https:' ? 443 : 80),
    protocol: base.protocol.replace(':', '') as 'http' | 'https',
  });
}
