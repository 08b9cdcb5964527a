import { randomBytes } from 'node:crypto';

export const SLUG_RE = /^[a-z0-9-]{1,80}$/;

export function slugify(name: string): string {
  const base = name
    .normalize('NFKD')
    .replace(/[\u0300-\u036f]/g, '')
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, 60)
    .replace(/-+$/g, '');
  return base || 'org';
}

export const withSuffix = (slug: string): string => `${slug}-${randomBytes(4).toString('hex')}`;
