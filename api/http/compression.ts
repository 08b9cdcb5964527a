import { constants } from 'node:zlib';
import compress from 'koa-compress';

// Answers over 1 KiB are sent zstd-, brotli- or gzip-compressed when the client accepts it (koa-compress negotiates
// Accept-Encoding, preferring them in that order, and sets Vary): JSON answers, the OpenAPI document, and the
// dashboard's JavaScript, CSS and HTML. Not exports' downloads (NDJSON, CSV: large files whose compression would
// take the API's CPU for the length of a download) nor event streams (MCP's, which must not be buffered). zstd at
// its default level, brotli at quality 4 and gzip at level 6: a fraction of the CPU of brotli's default 11 for most
// of its gain on JSON.
const COMPRESSED = /^(application\/(json|javascript)|text\/(javascript|css|html)|image\/svg\+xml)(;|$)/;

export const compression = compress({
  threshold: 1024,
  filter: (type) => COMPRESSED.test(type),
  br: { params: { [constants.BROTLI_PARAM_QUALITY]: 4 } },
  gzip: { level: 6 },
  deflate: false,
});
