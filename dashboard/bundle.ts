// What a first load of the dashboard fetches, read from its build (dist/chunks.json, written by build.ts): the
// entry, the chunks it imports (index.html preloads them), and the chunk of the page it opens with that chunk's
// own imports. Sizes raw and gzipped file by file, as each travels (gzip's default level, the API's own). Read by
// bench/dashboard.ts and by the test of the budget (test/integration/dashboard-bundle.test.ts).
import { readFile } from 'node:fs/promises';
import { gzipSync } from 'node:zlib';

// The first-load figures (issue 52): what a first load may download, in KiB as the bench prints them.
export const FIRST_LOAD_BUDGET = { raw: 88 * 1024, gzipped: 27 * 1024 };

export interface Sizes {
  files: string[];
  raw: number;
  gzipped: number;
}

interface Chunks {
  entry: string;
  style: string;
  chunks: Record<string, { source: string | null; bytes: number; imports: string[] }>;
}

export async function readBundle(dist: URL = new URL('./dist/', import.meta.url)) {
  const { entry, chunks } = JSON.parse(await readFile(new URL('chunks.json', dist), 'utf8')) as Chunks;
  const gzipped = new Map<string, number>();
  for (const file of Object.keys(chunks)) gzipped.set(file, gzipSync(await readFile(new URL(`assets/${file}`, dist))).length);
  const sizes = (files: Set<string>): Sizes => ({
    files: [...files].sort(),
    raw: [...files].reduce((sum, file) => sum + chunks[file]!.bytes, 0),
    gzipped: [...files].reduce((sum, file) => sum + gzipped.get(file)!, 0),
  });
  const withImports = (file: string, into: Set<string>): Set<string> => {
    if (!into.has(file)) {
      into.add(file);
      for (const imported of chunks[file]!.imports) withImports(imported, into);
    }
    return into;
  };
  return {
    entry,
    /** A first load of the page whose module's path ends with `page` (`pages/signin.tsx`, `memory-pages.ts`). */
    firstLoad(page: string): Sizes {
      const chunk = Object.keys(chunks).find((file) => chunks[file]!.source?.endsWith(`/${page}`));
      if (!chunk) throw new Error(`no chunk of the dashboard's build is the page ${page}`);
      return sizes(withImports(chunk, withImports(entry, new Set())));
    },
    /** Every script of the build, as a visit to every page would fetch them. */
    all: (): Sizes => sizes(new Set(Object.keys(chunks))),
  };
}
