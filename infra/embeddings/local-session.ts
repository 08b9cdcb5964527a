// The body of one thread of the local embedding model (infra/embeddings/local.ts): an onnxruntime session of
// its own, running the passes it is sent one at a time and answering each pass's vectors.
import { parentPort, workerData } from 'node:worker_threads';
import { InferenceSession, Tensor } from 'onnxruntime-node';

export interface SessionSetup {
  modelPath: string;
  threads: number;
  dimensions: number;
}

// A pass: `rows` texts of token ids, each padded with [PAD] (id 0) to `width`.
export interface PassRequest {
  ids: BigInt64Array<ArrayBuffer>;
  rows: number;
  width: number;
}

// The [CLS] vector of each row, `dimensions` floats per row, not yet scaled; or why the pass failed.
export type PassReply = { vectors: Float32Array } | { error: string };

// The first message of a thread: its session is loaded, or why not.
export type SessionMessage = { ready: true } | { error: string };

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
      const vectors = new Float32Array(rows * setup.dimensions);
      for (let row = 0; row < rows; row++) vectors.set(hidden.subarray(row * width * setup.dimensions, (row * width + 1) * setup.dimensions), row * setup.dimensions);
      port.postMessage({ vectors } satisfies PassReply, [vectors.buffer]);
    } catch (err) {
      port.postMessage({ error: String(err) } satisfies PassReply);
    }
  });
  port.postMessage({ ready: true } satisfies SessionMessage);
} catch (err) {
  port.postMessage({ error: String(err) } satisfies SessionMessage);
}
