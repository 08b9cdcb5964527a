import { v7 } from 'uuid';

// Time-ordered UUIDs keep b-tree inserts local and make id order match creation order.
export const newId = (): string => v7();

const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
export const isUuid = (value: string): boolean => UUID_RE.test(value);
