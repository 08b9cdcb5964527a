import { Readable } from 'node:stream';
import { buffer } from 'node:stream/consumers';
import { pipeline } from 'node:stream/promises';
import { describe, expect, it } from 'vitest';
import { OneColumn } from '../../domain/copy-out.ts';

const int16 = (n: number) => Buffer.from([(n >> 8) & 0xff, n & 0xff]);
const int32 = (n: number) => {
  const b = Buffer.alloc(4);
  b.writeInt32BE(n);
  return b;
};

// PostgreSQL's binary COPY of one column, by the format's description: the rows' values (null for a null), and
// optionally a header extension.
function binaryCopy(values: (string | null)[], extension = Buffer.alloc(0)): Buffer {
  return Buffer.concat([
    Buffer.from('PGCOPY\n\xff\r\n\0', 'latin1'),
    int32(0),
    int32(extension.length),
    extension,
    ...values.flatMap((v) => (v === null ? [int16(1), int32(-1)] : [int16(1), int32(Buffer.byteLength(v)), Buffer.from(v)])),
    int16(-1),
  ]);
}

// The reader's output when its input arrives cut into chunks of the given sizes (the last takes the rest).
async function read(input: Buffer, sizes: number[] = []): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let at = 0;
  for (const size of sizes) {
    chunks.push(input.subarray(at, at + size));
    at += size;
  }
  chunks.push(input.subarray(at));
  const reader = new OneColumn();
  const [out] = await Promise.all([buffer(reader), pipeline(Readable.from(chunks.filter((c) => c.length > 0)), reader)]);
  return out;
}

describe('OneColumn (binary COPY of one column)', () => {
  const values = ['{"id":1,"content":"naïve café ☕"}\n', '', null, 'x'.repeat(70_000), '🦜 last\n'];
  const expected = Buffer.from(values.filter((v) => v !== null).join(''));

  it("passes on each row's bytes in order, a null row adding nothing", async () => {
    expect(await read(binaryCopy(values))).toEqual(expected);
    expect(await read(binaryCopy([]))).toEqual(Buffer.alloc(0));
  });

  it('reads the same whatever the chunks the bytes arrive in, cut anywhere', async () => {
    const input = binaryCopy(values, Buffer.from('ext'));
    for (let cut = 1; cut < 120; cut++) expect(await read(input, [cut]), `cut at ${cut}`).toEqual(expected);
    expect(
      await read(
        input,
        Array.from({ length: input.length }, () => 1),
      ),
    ).toEqual(expected);
    expect(await read(input, [3, 17, 2, 1, 4, 65_536, 5, 9])).toEqual(expected);
  });

  it('refuses what is not a binary COPY of one column, or ends before its trailer', async () => {
    await expect(read(Buffer.from('COPY 1\n'.repeat(5)))).rejects.toThrow(/signature/);
    const two = Buffer.concat([
      binaryCopy([]).subarray(0, 19),
      int16(2),
      int32(1),
      Buffer.from('a'),
      int32(1),
      Buffer.from('b'),
      int16(-1),
    ]);
    await expect(read(two)).rejects.toThrow(/2 fields/);
    const input = binaryCopy(values);
    await expect(read(input.subarray(0, input.length - 2))).rejects.toThrow(/before its trailer/);
    await expect(read(input.subarray(0, 40))).rejects.toThrow(/before its trailer/);
    await expect(read(Buffer.concat([input, Buffer.from('x')]))).rejects.toThrow(/after the trailer/);
  });
});
