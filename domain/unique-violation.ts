import { UniqueConstraintViolationException } from '@mikro-orm/postgresql';

// A unique index refused the write, whether it came through MikroORM's unit of work (its exception class)
// or through `query` (the driver's error, SQLSTATE 23505).
export const isUniqueViolation = (err: unknown): boolean =>
  err instanceof UniqueConstraintViolationException || (err instanceof Error && (err as { code?: unknown }).code === '23505');
