import type { ErrorCode } from '../error-codes.ts';
import { AppError, type ErrorKind } from '../errors.ts';

// OAuth's error answers (RFC 6749 5.2, RFC 7591 3.2.2) through the one error type: the code is `error`, and the
// text travels as `error_description` too, the member OAuth clients read.
export const oauthError = (code: ErrorCode, description: string, kind: ErrorKind = 'invalid'): AppError =>
  new AppError(kind, code, description, { error_description: description });
