// The OpenAPI document's longer prose for the routes of api/temporal/, kept out of the route definitions.

// Both directions, encode and decode.
export const postTemporalCodec =
  'Remote codec endpoint for the Temporal Web UI. Callers must be operators: a verified e-mail listed in ' +
  'OPERATOR_EMAILS (anyone in local mode). Payloads with an unknown key or broken ciphertext are 400 ' +
  '`payload_undecryptable`.';
