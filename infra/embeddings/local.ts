import { readFile } from 'node:fs/promises';
import { availableParallelism } from 'node:os';
import { join } from 'node:path';
import { Tokenizer } from '@huggingface/tokenizers';
import { InferenceSession, Tensor } from 'onnxruntime-node';
import { EMBEDDING_DIMENSIONS, embeddingsUnavailable, unitLength, type Embedder } from '../../domain/embeddings/port.ts';

export interface LocalEmbedderOptions {
  // Holds model.onnx and tokenizer.json of BAAI/bge-small-en-v1.5 (scripts/lib.sh, ensure_embedding_model).
  modelDir: string;
  // onnxruntime's intra-op threads.
  threads?: number;
  // A pass through the model holds at most batchSize texts and batchTokens tokens counting padding (at least one
  // text, however long).
  batchSize?: number;
  batchTokens?: number;
}

const MODEL = 'bge-small-en-v1.5-int8';
// bge's instruction for retrieval queries; stored texts go in as they are.
export const QUERY_PREFIX = 'Represent this sentence for searching relevant passages: ';
// The model has position embeddings for 512 tokens, [CLS] and [SEP] included.
const MAX_TOKENS = 512;

// bge-small-en-v1.5 in this process: onnxruntime on the CPU, the tokenizer in plain JS. The vector of a text is
// the last hidden state of its [CLS] token, scaled to unit length (the model's own pooling).
//
// Settings measured on the 2-core development machine, idle otherwise, with `node bench/embeddings.ts` (texts/s,
// best of 3; sentences of 43 tokens, agent memories of 124, texts cut at 512):
// - 2 intra-op threads embed 1.9 times as fast as 1 (sentences 99 vs 52/s, memories 31 vs 16/s).
// - Throughput peaks at a few hundred tokens a pass, padding included, while memory grows with texts × width²:
//   passes of 8, 32 or 64 texts with no token limit did memories at 26, 17 or 12/s and peaked at 0.8-1.3 GB RSS;
//   at most 32 texts and 512 tokens did 31/s and peaked at 380 MB (load alone: 290-360 MB).
// - No queue: onnxruntime-node runs a session synchronously on the JS thread (run() only waits for
//   setImmediate), so concurrent calls already take turns. Four callers at once got the same 136 queries/s as one
//   caller, whose queries took 7.3 ms (p50). The price: a pass holds up the event loop, up to 160 ms for a full one.
// Measured apart from the bench: idle threads that do not spin cost a query 15 ms instead of 9 when queries come
// 20 ms apart, but use 48% of a core instead of 133%, which PostgreSQL needs while it runs the same search; inter-op
// threads slow this sequential graph down (parallel mode: 37 vs 85/s); the graph optimization levels measure alike.
export async function createLocalEmbedder({
  modelDir,
  threads = Math.min(2, availableParallelism()),
  batchSize = 32,
  batchTokens = 512,
}: LocalEmbedderOptions): Promise<Embedder> {
  // The tokenizer needs no tokenizer_config.json: bge's settings are all in tokenizer.json.
  const tokenizer = new Tokenizer(JSON.parse(await readFile(join(modelDir, 'tokenizer.json'), 'utf8')), {});
  const session = await InferenceSession.create(join(modelDir, 'model.onnx'), {
    intraOpNumThreads: threads,
    interOpNumThreads: 1,
    // Idle intra-op threads sleep instead of spinning (see above).
    extra: { session: { intra_op: { allow_spinning: '0' } } },
  });

  // [CLS] text [SEP]; the tokenizer does not truncate, so a long text keeps its first tokens and its [SEP].
  function encode(text: string): number[] {
    const { ids } = tokenizer.encode(text);
    return ids.length <= MAX_TOKENS ? ids : [...ids.slice(0, MAX_TOKENS - 1), ids.at(-1)!];
  }

  // One forward pass over texts padded to the longest of them ([PAD] is token 0, so zeros are padding).
  async function run(batch: number[][]): Promise<Float32Array[]> {
    const width = Math.max(...batch.map((ids) => ids.length));
    const shape = [batch.length, width];
    const ids = new BigInt64Array(batch.length * width);
    const mask = new BigInt64Array(ids.length);
    batch.forEach((row, b) =>
      row.forEach((id, t) => {
        ids[b * width + t] = BigInt(id);
        mask[b * width + t] = 1n;
      }),
    );
    const output = await session.run({
      input_ids: new Tensor('int64', ids, shape),
      attention_mask: new Tensor('int64', mask, shape),
      token_type_ids: new Tensor('int64', new BigInt64Array(ids.length), shape),
    });
    const hidden = output.last_hidden_state!.data as Float32Array;
    return batch.map((_, b) => {
      const vector = unitLength(hidden.subarray(b * width * EMBEDDING_DIMENSIONS, (b * width + 1) * EMBEDDING_DIMENSIONS));
      if (!vector) throw embeddingsUnavailable('the embedding model produced a zero vector');
      return vector;
    });
  }

  async function embed(texts: string[]): Promise<Float32Array[]> {
    const encoded = texts.map(encode);
    // Texts of similar length share a pass, so little of it is spent on padding.
    const order = encoded.map((_, i) => i).sort((a, b) => encoded[a]!.length - encoded[b]!.length);
    const vectors: Float32Array[] = new Array(texts.length);
    let start = 0;
    while (start < order.length) {
      // In length order, the text that joins a pass last sets its width.
      let end = start + 1;
      while (end < order.length && end - start < batchSize && (end - start + 1) * encoded[order[end]!]!.length <= batchTokens) end++;
      const batch = order.slice(start, end);
      (await run(batch.map((i) => encoded[i]!))).forEach((vector, row) => (vectors[batch[row]!] = vector));
      start = end;
    }
    return vectors;
  }

  return {
    model: MODEL,
    embedDocuments: embed,
    embedQueries: (texts) => embed(texts.map((text) => QUERY_PREFIX + text)),
  };
}
