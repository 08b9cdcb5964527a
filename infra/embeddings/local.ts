import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { pipeline } from 'node:stream/promises';
import { availableParallelism } from 'node:os';
import { join } from 'node:path';
import { Tokenizer } from '@huggingface/tokenizers';
import { EMBEDDING_DIMENSIONS, embeddingsUnavailable, unitLength, type Embedder } from '../../domain/store/embedder.ts';
import { DEFAULT_LOCAL_MODEL, LOCAL_MODELS, type LocalModel, type LocalModelId } from './local-models.ts';
import type { PassRequest, SessionSetup } from './local-session.ts';
import { startThreads } from '../../domain/threads.ts';

export interface LocalEmbedderOptions {
  // Holds model.onnx and tokenizer.json of `model` (scripts/lib.sh, ensure_embedding_model).
  modelDir: string;
  model?: LocalModelId;
  // Sessions of the model, each in a thread of its own and running one pass at a time, and onnxruntime's
  // intra-op threads in each. Defaults by what the process embeds: localEmbedderDefaults.
  sessions?: number;
  threads?: number;
  // A pass through the model holds at most batchSize texts and batchTokens tokens counting padding (at least one
  // text, however long); by default PASS_TOKENS_PER_THREAD for each of a session's threads.
  batchSize?: number;
  batchTokens?: number;
}

// Both models have position embeddings for 512 tokens, [CLS] and [SEP] included.
const MAX_TOKENS = 512;
// A question is read from at most this many tokens: its first half and its last (where a whole message passed as
// the question usually asks it). A pass's time grows with its tokens, so cutting long questions keeps search fast,
// and they rank as well cut as whole. Stored texts keep MAX_TOKENS.
const MAX_QUERY_TOKENS = 128;
// A session's passes hold about this many tokens per intra-op thread. `BENCH_PASS_SIZES= BENCH_PASS_TOKENS=256
// node bench/embeddings.ts` on the 2-core machine: two sessions of one thread embedded agent memories at 77-82/s
// in passes of at most 256 tokens against 73-79/s at 512, and 65 against 60/s beside a process keeping 60% of a
// core busy; one session of two threads did 56 against 73/s (its threads split each operator, and smaller passes
// leave them less to split).
const PASS_TOKENS_PER_THREAD = 256;

// What the model is mostly for in a process sets how its CPU is split. `node bench/embeddings.ts` on the 2-core
// machine (BENCH_LAYOUTS=1x2,2x1; BENCH_BUSY=0.6 runs a process beside it that keeps 60% of a core busy, as
// the API and PostgreSQL do while the worker embeds), agent memories of 124 tokens:
// - `documents` (the worker, embedding saved memories): a session per core with one thread each, 80-82
//   memories/s idle and 65 beside the busy process, against 61-71 and 56 for one session of two threads.
//   Sessions running passes side by side share nothing, whereas the intra-op threads of one session meet at a
//   barrier after every operator and wait for the slower one. A second session costs about 170 MB.
// - `queries` (the API, one short query per search): one session, with a thread per core for the passes of many
//   queries (bulk search). A query alone takes about 4 ms with one session or two; a second would embed twice
//   the queries at once (456 against 255/s for four callers) but costs the memory above. Its passes hold at most
//   QUERY_PASS_TEXTS questions: one org's bulk search is embedded in several passes, and another org's question
//   waits for one of them (orgs take turns), not for all.
export type EmbeddingPurpose = 'queries' | 'documents';
const QUERY_PASS_TEXTS = 8;
export function localEmbedderDefaults(purpose: EmbeddingPurpose): { sessions: number; threads: number; batchSize: number } {
  const cores = Math.min(2, availableParallelism());
  return purpose === 'queries'
    ? { sessions: 1, threads: cores, batchSize: QUERY_PASS_TEXTS }
    : { sessions: cores, threads: 1, batchSize: 32 };
}

// A local model (local-models.ts, bge-small-en-v1.5 by default) in this process: onnxruntime on the CPU in worker
// threads (local-session.ts), the tokenizer in plain JS on the caller's thread. The vector of a text is pooled the
// model's own way and scaled to unit length. The settings below were measured with bge; e5 has the same shape.
//
// Settings measured on the 2-core development machine, idle otherwise, with `node bench/embeddings.ts` (texts/s,
// best of 3; sentences of 43 tokens, agent memories of 124, texts cut at 512):
// - 2 intra-op threads embed 1.9 times as fast as 1 (sentences 99 vs 52/s, memories 31 vs 16/s).
// - Throughput peaks at a few hundred tokens a pass, padding included, while memory grows with texts × width²:
//   passes of 8, 32 or 64 texts with no token limit did memories at 26, 17 or 12/s and peaked at 0.8-1.3 GB RSS;
//   at most 32 texts and 512 tokens did 31/s and peaked at 380 MB (load alone: 290-360 MB).
// - Sessions run in worker threads: onnxruntime-node runs a session synchronously on its JS thread, which would
//   hold up the process's event loop for a whole pass (up to 160 ms).
// Measured apart from the bench: idle threads that do not spin cost a query 15 ms instead of 9 when queries come
// 20 ms apart, but use 48% of a core instead of 133%, which PostgreSQL needs while it runs the same search; inter-op
// threads slow this sequential graph down (parallel mode: 37 vs 85/s); the graph optimization levels measure alike;
// onnxruntime's transformer fusions (Attention, SkipLayerNormalization) quantized the same way were slower here.
export async function createLocalEmbedder({
  modelDir,
  model = DEFAULT_LOCAL_MODEL,
  sessions = localEmbedderDefaults('documents').sessions,
  threads = localEmbedderDefaults('documents').threads,
  batchSize = 32,
  batchTokens = PASS_TOKENS_PER_THREAD * threads,
}: LocalEmbedderOptions): Promise<Embedder> {
  const spec: LocalModel = LOCAL_MODELS[model];
  const { name, pooling, queryPrefix, documentPrefix } = spec;
  const modelPath = join(modelDir, 'model.onnx');
  // A directory holding another model (or a damaged file) would embed silently wrong vectors under this name.
  const digest = await sha256Of(modelPath);
  if (digest !== spec.onnxSha256)
    throw new Error(
      `${modelPath} is not ${model} (its sha256 is ${digest}, not ${spec.onnxSha256}): check EMBEDDING_LOCAL_MODEL and EMBEDDING_MODEL_DIR`,
    );
  // The tokenizer needs no tokenizer_config.json: the models' settings are all in tokenizer.json.
  const tokenizer = new Tokenizer(JSON.parse(await readFile(join(modelDir, 'tokenizer.json'), 'utf8')), {});
  // Sessions in threads of their own (local-session.ts), each org's passes in its turn.
  const setup: SessionSetup = { modelPath, threads, dimensions: EMBEDDING_DIMENSIONS, pooling };
  const pool = await startThreads<PassRequest, Float32Array>(
    new URL('./local-session.ts', import.meta.url),
    setup,
    sessions,
    'the embedding model',
    embeddingsUnavailable,
  );

  // [CLS] text [SEP]; the tokenizer does not truncate, so a long text keeps its first tokens and its [SEP], a long
  // question its first and last tokens.
  function encode(text: string, query: boolean): number[] {
    const { ids } = tokenizer.encode(text);
    if (query && ids.length > MAX_QUERY_TOKENS)
      return [...ids.slice(0, MAX_QUERY_TOKENS / 2), ...ids.slice(ids.length - MAX_QUERY_TOKENS / 2)];
    return ids.length <= MAX_TOKENS ? ids : [...ids.slice(0, MAX_TOKENS - 1), ids.at(-1)!];
  }

  // One forward pass over texts padded to the longest of them ([PAD] is token 0), in the owner's turn.
  async function run(batch: number[][], owner: string): Promise<Float32Array[]> {
    const width = Math.max(...batch.map((ids) => ids.length));
    const ids = new BigInt64Array(batch.length * width);
    batch.forEach((row, b) => row.forEach((id, t) => (ids[b * width + t] = BigInt(id))));
    const hidden = await pool.run(owner, { ids, rows: batch.length, width }, [ids.buffer]);
    return batch.map((_, b) => {
      const vector = unitLength(hidden.subarray(b * EMBEDDING_DIMENSIONS, (b + 1) * EMBEDDING_DIMENSIONS));
      if (!vector) throw embeddingsUnavailable('the embedding model produced a zero vector');
      return vector;
    });
  }

  async function embed(texts: string[], query: boolean, owner: string): Promise<Float32Array[]> {
    const encoded = texts.map((text) => encode(text, query));
    // Texts of similar length share a pass, so little of it is spent on padding.
    const order = encoded.map((_, i) => i).sort((a, b) => encoded[a]!.length - encoded[b]!.length);
    const batches: number[][] = [];
    let start = 0;
    while (start < order.length) {
      // In length order, the text that joins a pass last sets its width.
      let end = start + 1;
      while (end < order.length && end - start < batchSize && (end - start + 1) * encoded[order[end]!]!.length <= batchTokens) end++;
      batches.push(order.slice(start, end));
      start = end;
    }
    // The passes queue for the sessions, which take them as they come free, each org's in its turn.
    const vectors: Float32Array[] = new Array(texts.length);
    await Promise.all(
      batches.map(async (batch) =>
        (
          await run(
            batch.map((i) => encoded[i]!),
            owner,
          )
        ).forEach((vector, row) => (vectors[batch[row]!] = vector)),
      ),
    );
    return vectors;
  }

  return {
    model: name,
    ...(spec.nearDuplicate === undefined ? {} : { nearDuplicate: spec.nearDuplicate }),
    ...(spec.relevance === undefined ? {} : { relevance: spec.relevance }),
    embedDocuments: (texts, orgId = '') => embed(documentPrefix ? texts.map((text) => documentPrefix + text) : texts, false, orgId),
    embedQueries: (texts, orgId = '') =>
      embed(
        texts.map((text) => queryPrefix + text),
        true,
        orgId,
      ),
    close: pool.close,
  };
}

async function sha256Of(path: string): Promise<string> {
  const hash = createHash('sha256');
  await pipeline(createReadStream(path), hash);
  return hash.digest('hex');
}
