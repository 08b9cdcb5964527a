import { pipeline, Transform, type Readable, type TransformCallback } from 'node:stream';
import type { EntityManager } from '@mikro-orm/postgresql';
import type { RawBuilder } from 'kysely';
import type { Pool } from 'pg';
import { to as copyTo } from 'pg-copy-streams';

// The bytes of a query's one column, row after row, as a stream: `copy (query) to stdout (format binary)` on a
// connection of its own, each row's bytes passed on as the socket's buffers that carried them. Nothing of a row
// becomes a JS string (a SELECT holds a whole result's rows as strings, which V8 frees only at a full collection,
// so a large export grew the API's memory by about its size), and the socket is paused while the reader is behind.
//
// COPY takes no bound parameters: the statement inlines its values with sql.lit (a statement with parameters is
// refused). It runs outside any transaction of `em`. The connection goes back to the pool once COPY has sent its
// last row, so a reader that is slow holds it that long (exportFile reads a page at a time for that reason); a
// stream destroyed before the end closes its connection instead, which ends the COPY.
export async function copyOut(em: EntityManager, statement: RawBuilder<unknown>): Promise<Readable> {
  const { sql, parameters } = statement.compile(em.getKysely());
  if (parameters.length > 0) throw new Error('copyOut takes no bound parameters: inline the values with sql.lit');
  const pool = (await em.getConnection().getNativeClient()) as Pool;
  const client = await pool.connect();
  const rows = client.query(copyTo(`copy (${sql}) to stdout (format binary)`));
  const column = new OneColumn();
  pipeline(rows, column, (err) => client.release(err ?? undefined));
  return column;
}

// PostgreSQL's binary COPY format: a signature, a 32-bit flags field and a header extension of a 32-bit length;
// then each row as a 16-bit count of fields and each field as its 32-bit length (-1 for null) and its bytes; then
// a count of -1. All integers big-endian.
const SIGNATURE = Buffer.from('PGCOPY\n\xff\r\n\0', 'latin1');
const HEADER = SIGNATURE.length + 8;

type Part = 'header' | 'extension' | 'row' | 'field' | 'end';

// Binary COPY of one column in, that column's bytes out (a null row adds nothing). A field's bytes go on as slices
// of the chunks they came in; only the small fixed-size parts are gathered across chunks.
export class OneColumn extends Transform {
  #part: Part = 'header';
  #fixed: Buffer = Buffer.alloc(0);
  // The fixed-size part being gathered, and the bytes of the current field not passed on yet.
  #want = HEADER;
  #fieldLeft = 0;

  override _transform(chunk: Buffer, _encoding: BufferEncoding, done: TransformCallback): void {
    let at = 0;
    try {
      while (at < chunk.length) {
        if (this.#fieldLeft > 0) {
          const n = Math.min(this.#fieldLeft, chunk.length - at);
          this.push(chunk.subarray(at, at + n));
          this.#fieldLeft -= n;
          at += n;
          continue;
        }
        if (this.#part === 'end') throw new Error('binary COPY: bytes after the trailer');
        const take = Math.min(this.#want - this.#fixed.length, chunk.length - at);
        this.#fixed =
          this.#fixed.length === 0 && take === this.#want
            ? chunk.subarray(at, at + take)
            : Buffer.concat([this.#fixed, chunk.subarray(at, at + take)]);
        at += take;
        if (this.#fixed.length === this.#want) this.#next(this.#fixed);
      }
      done();
    } catch (err) {
      done(err as Error);
    }
  }

  override _flush(done: TransformCallback): void {
    done(this.#part === 'end' ? null : new Error('binary COPY: the stream ended before its trailer'));
  }

  // A fixed-size part is complete: read it, and say what comes next.
  #next(bytes: Buffer): void {
    this.#fixed = Buffer.alloc(0);
    const expect = (part: Part, want: number) => {
      this.#part = part;
      this.#want = want;
    };
    switch (this.#part) {
      case 'header': {
        if (!bytes.subarray(0, SIGNATURE.length).equals(SIGNATURE)) throw new Error("binary COPY: not the format's signature");
        const extension = bytes.readInt32BE(SIGNATURE.length + 4);
        return extension > 0 ? expect('extension', extension) : expect('row', 2);
      }
      case 'extension':
        return expect('row', 2);
      case 'row': {
        const fields = bytes.readInt16BE(0);
        if (fields === -1) return expect('end', 0);
        if (fields !== 1) throw new Error(`binary COPY: a row of ${fields} fields, where one was expected`);
        return expect('field', 4);
      }
      case 'field':
        this.#fieldLeft = Math.max(0, bytes.readInt32BE(0));
        return expect('row', 2);
    }
  }
}
