// Instants a caller may give or filter by: from 1970 to the end of year 9999, what ISO 8601 and every client's dates
// can write. Larger numbers are refused (400) rather than handed to PostgreSQL, whose errors on them became 500s.
export const MAX_EPOCH_MS = 253_402_300_799_999;
