import { readFileSync } from 'node:fs';
import { join } from 'node:path';

export interface TextItem {
  id: string;
  text: string;
}

/** query id -> document id -> gain (> 0 means relevant). */
export type Qrels = Map<string, Map<string, number>>;

export interface Collection {
  name: string;
  docs: TextItem[];
  queries: TextItem[];
  qrels: Qrels;
}

interface DottedRecord {
  id: string;
  fields: Map<string, string>;
}

const MARKER = /^\.([A-Z])(?:\s+(\S*))?\s*$/;

// The SMART dotted format: ".I <id>" opens a record, ".X" alone on a line opens field X. A field that occurs
// twice is appended to, since Cranfield records 576 and 578 repeat .W mid-abstract. (Record 240 has stray .A
// and .B lines inside its abstract; the text after them lands in those unindexed fields, as in other parsers.)
export function parseDotted(content: string): DottedRecord[] {
  const records: DottedRecord[] = [];
  let current: DottedRecord | undefined;
  let field: string | undefined;
  for (const line of content.split(/\r?\n/)) {
    const marker = MARKER.exec(line);
    if (marker?.[1] === 'I') {
      current = { id: String(Number(marker[2])), fields: new Map() };
      records.push(current);
      field = undefined;
    } else if (marker && current) {
      field = marker[1];
    } else if (current && field) {
      const previous = current.fields.get(field);
      current.fields.set(field, previous === undefined ? line : `${previous}\n${line}`);
    }
  }
  for (const record of records) for (const [f, value] of record.fields) record.fields.set(f, value.trim());
  return records;
}

function text(record: DottedRecord, fields: readonly string[]): string {
  return fields.map((f) => record.fields.get(f) ?? '').join('\n');
}

function columns(content: string): string[][] {
  return content
    .split(/\r?\n/)
    .map((line) => line.trim().split(/\s+/))
    .filter((cols) => cols.length >= 2 && cols[0] !== '');
}

function judge(qrels: Qrels, query: string, doc: string, gain: number): void {
  let judged = qrels.get(query);
  if (!judged) qrels.set(query, (judged = new Map()));
  judged.set(doc, gain);
}

/** Cranfield 1400: gain = 5 - grade for grades 1..4 (1 is most relevant); grade -1 rows are not relevant. */
export function loadCranfield(dataDir: string): Collection {
  const dir = join(dataDir, 'cranfield');
  const docs = parseDotted(readFileSync(join(dir, 'cran.all.1400'), 'utf8')).map((r) => ({ id: r.id, text: text(r, ['T', 'W']) }));
  // cranqrel numbers queries 1..225 by position in cran.qry, whose own .I numbers skip (up to 365).
  const queries = parseDotted(readFileSync(join(dir, 'cran.qry'), 'utf8')).map((r, i) => ({ id: String(i + 1), text: text(r, ['W']) }));
  const qrels: Qrels = new Map();
  for (const [q, d, g] of columns(readFileSync(join(dir, 'cranqrel'), 'utf8'))) {
    const grade = Number(g);
    judge(qrels, String(Number(q)), String(Number(d)), grade >= 1 && grade <= 4 ? 5 - grade : 0);
  }
  return { name: 'Cranfield', docs, queries, qrels };
}

/** CISI: binary relevance; CISI.REL judges 76 of the 112 queries. */
export function loadCisi(dataDir: string): Collection {
  const dir = join(dataDir, 'cisi');
  const docs = parseDotted(readFileSync(join(dir, 'CISI.ALL'), 'utf8')).map((r) => ({ id: r.id, text: text(r, ['T', 'W']) }));
  // Queries 58..112 are abstracts of papers with a title; the title is part of the information need.
  const queries = parseDotted(readFileSync(join(dir, 'CISI.QRY'), 'utf8')).map((r) => ({ id: r.id, text: text(r, ['T', 'W']) }));
  const qrels: Qrels = new Map();
  for (const [q, d] of columns(readFileSync(join(dir, 'CISI.REL'), 'utf8'))) judge(qrels, String(Number(q)), String(Number(d)), 1);
  return { name: 'CISI', docs, queries, qrels };
}
