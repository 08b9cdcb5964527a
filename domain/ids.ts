import { v7 } from 'uuid';

// Time-ordered UUIDs keep b-tree inserts local and make id order match creation order.
export const newId = (): string => v7();

// A UUID's text form, any version, either case.
export const isUuid = (text: string): boolean => /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(text);
