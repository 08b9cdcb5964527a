// Bundles the stdio server (src/main.ts, with the service's api/mcp/tools.ts and the request schemas it uses) into
// one file for Node.js 20 and later, so the package has no dependencies to install. Run by `npm pack` (prepack).
import { build } from 'esbuild';

await build({
  entryPoints: [new URL('./src/main.ts', import.meta.url).pathname],
  outfile: new URL('./dist/memory-service-mcp.js', import.meta.url).pathname,
  bundle: true,
  platform: 'node',
  format: 'esm',
  target: 'node20',
  banner: { js: '#!/usr/bin/env node' },
  logLevel: 'warning',
});
