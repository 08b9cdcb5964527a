import { describe, expect, it } from 'vitest';
import { databaseTrouble } from '../../domain/sql.ts';

const withCode = (message: string, code: string) => Object.assign(new Error(message), { code });

// What the API answers 503 for (api/http/errors.ts): the database's own trouble, never the statement's fault.
describe('database trouble', () => {
  it('tells a busy pool, a deadline and a server that is gone from a statement that failed', () => {
    expect(databaseTrouble(new Error('timeout exceeded when trying to connect'))).toBe('busy');
    expect(databaseTrouble(withCode('canceling statement due to statement timeout', '57014'))).toBe('timeout');
    expect(databaseTrouble(withCode('terminating connection due to administrator command', '57P01'))).toBe('down');
    expect(databaseTrouble(withCode('connect ECONNREFUSED 127.0.0.1:5433', 'ECONNREFUSED'))).toBe('down');
    expect(databaseTrouble(new Error('Connection terminated unexpectedly'))).toBe('down');
    expect(databaseTrouble(withCode('duplicate key value violates unique constraint', '23505'))).toBeNull();
    expect(databaseTrouble('not an error')).toBeNull();
  });

  it("counts a pooled client whose connection broke before the statement as a server that is gone", () => {
    // pg's words for a query on a client whose connection failed (a PostgreSQL restart) or was closed.
    expect(databaseTrouble(new Error('Client has encountered a connection error and is not queryable'))).toBe('down');
    expect(databaseTrouble(new Error('Client was closed and is not queryable'))).toBe('down');
  });
});
