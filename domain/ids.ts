import { v7 } from 'uuid';

// Time-ordered UUIDs keep b-tree inserts local and make id order match creation order.
export const newId = (): string => v7();
