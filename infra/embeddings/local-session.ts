// The body of one thread of the local embedding model (infra/embeddings/local.ts): an onnxruntime session of
// its own, running the passes it is sent one at a time and answering each pass's vectors.
import { parentPort, workerData } from 'node:worker_threads';
import { InferenceSession, Tensor } from 'onnxruntime-node';
import type { ThreadReady, ThreadReply } from '../../domain/threads.ts';

export interface SessionSetup {
  modelPath: string;
  threads: number;
  dimensions: number;
  pooling: 'cls' | 'mean';
}

// A pass: `rows` texts of token ids, each padded with [PAD] (id 0) to `width`.
export interface PassRequest {
  ids: BigInt64Array<ArrayBuffer>;
  rows: number;
  width: number;
}

// A pass's answer (domain/threads.ts): the pooled vector of each row (its [CLS] token's, or the mean of its tokens'),
// `dimensions` floats per row, not yet scaled; or why the pass failed.
type PassReply = ThreadReply<Float32Array>;

// Each row's first token, [CLS].
function clsPooling(hidden: Float32Array, rows: number, width: number, dimensions: number): Float32Array<ArrayBuffer> {
  const vectors = new Float32Array(rows * dimensions);
  for (let row = 0; row < rows; row++)
    vectors.set(hidden.subarray(row * width * dimensions, (row * width + 1) * dimensions), row * dimensions);
  return vectors;
}

// The mean over each row's tokens, padding left out.
function meanPooling(hidden: Float32Array, ids: BigInt64Array, rows: number, width: number, dimensions: number): Float32Array<ArrayBuffer> {
  const vectors = new Float32Array(rows * dimensions);
  for (let row = 0; row < rows; row++) {
    const sum = vectors.subarray(row * dimensions, (row + 1) * dimensions);
    let tokens = 0;
    for (let t = 0; t < width; t++) {
      if (ids[row * width + t] === 0n) continue;
      tokens++;
      const at = (row * width + t) * dimensions;
      for (let d = 0; d < dimensions; d++) sum[d]! += hidden[at + d]!;
    }
    for (let d = 0; d < dimensions; d++) sum[d]! /= tokens;
  }
  return vectors;
}

const port = parentPort!;
const setup = workerData as SessionSetup;

try {
  const session = await InferenceSession.create(setup.modelPath, {
    intraOpNumThreads: setup.threads,
    interOpNumThreads: 1,
    // Idle intra-op threads sleep instead of spinning (see local.ts).
    extra: { session: { intra_op: { allow_spinning: '0' } } },
  });
  port.on('message', async ({ ids, rows, width }: PassRequest) => {
    try {
      const shape = [rows, width];
      const mask = ids.map((id) => (id === 0n ? 0n : 1n));
      const output = await session.run({
        input_ids: new Tensor('int64', ids, shape),
        attention_mask: new Tensor('int64', mask, shape),
        token_type_ids: new Tensor('int64', new BigInt64Array(ids.length), shape),
      });
      const hidden = output.last_hidden_state!.data as Float32Array;
      const vectors =
        setup.pooling === 'cls'
          ? clsPooling(hidden, rows, width, setup.dimensions)
          : meanPooling(hidden, ids, rows, width, setup.dimensions);
      port.postMessage({ value: vectors } satisfies PassReply, [vectors.buffer]);
    } catch (err) {
      port.postMessage({ error: String(err) } satisfies PassReply);
    }
  });
  port.postMessage({ ready: true } satisfies ThreadReady);
} catch (err) {
  port.postMessage({ error: String(err) } satisfies ThreadReady);
}
