import { DefaultFailureConverter } from '@temporalio/common';

// Error messages and stack traces travel as an encoded payload, so the codec encrypts them with the rest:
// a failure's message can carry an e-mail or a piece of memory text. Loaded by path (Temporal bundles it
// into the workflow sandbox too), hence a module of its own.
export const failureConverter = new DefaultFailureConverter({ encodeCommonAttributes: true });
