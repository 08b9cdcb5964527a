// The models the `local` provider can run (EMBEDDING_LOCAL_MODEL), each an int8 ONNX build with its tokenizer,
// fetched and checked by scripts/lib.sh (ensure_embedding_model). Both are BERT-small encoders of 12 layers and
// 384 dimensions with the same uncased WordPiece tokenizer; they differ in training, pooling and the text put
// before what they embed. Measured through the API in docs/performance.md (session 20):
// - bge-small-en-v1.5, the default, ranks the reference collections above the prototype's bar (hybrid
//   nDCG@10 on Cranfield and CISI 0.433 and 0.482, bar 0.425 and 0.459); e5 does not (0.410 and 0.444).
// - e5-small-v2 finds conversational and paraphrased memories better: LoCoMo evidence recall@10 in hybrid 70.0%
//   against 65.0-65.2%, our paraphrase set's recall@10 0.705 semantic against 0.559. It costs about 9% more CPU
//   a memory (its `passage: ` prefix is three more tokens).
export interface LocalModel {
  // Recorded beside every vector (Embedder.model): a switch of model re-embeds in the background.
  name: string;
  // bge reads the [CLS] token's last hidden state; e5 averages every token's.
  pooling: 'cls' | 'mean';
  // Put before every search query, and before every stored text: the instructions each model was trained with.
  queryPrefix: string;
  documentPrefix: string;
  // Embedder.nearDuplicate. e5's cosines sit higher than bge's (unrelated agent memories 0.70-0.75, paraphrases
  // 0.91-0.96, and "Alice prefers tea" against "Bob prefers coffee" 0.93): among the paraphrase set's 600
  // distinct memories, 57 pairs reach 0.95 with e5, as 46 reach bge's 0.9 (docs/performance.md, session 20).
  nearDuplicate?: number;
}

export const LOCAL_MODELS = {
  'bge-small-en-v1.5': { name: 'bge-small-en-v1.5-int8', pooling: 'cls', queryPrefix: 'Represent this sentence for searching relevant passages: ', documentPrefix: '' },
  'e5-small-v2': { name: 'e5-small-v2-int8', pooling: 'mean', queryPrefix: 'query: ', documentPrefix: 'passage: ', nearDuplicate: 0.95 },
} as const satisfies Record<string, LocalModel>;

export type LocalModelId = keyof typeof LOCAL_MODELS;
export const LOCAL_MODEL_IDS = Object.keys(LOCAL_MODELS) as [LocalModelId, ...LocalModelId[]];
export const DEFAULT_LOCAL_MODEL: LocalModelId = 'bge-small-en-v1.5';

// For the benchmarks, which read EMBEDDING_LOCAL_MODEL themselves (the services read it through infra/config.ts).
export function localModelId(value: string | undefined): LocalModelId {
  if (value === undefined || value === '') return DEFAULT_LOCAL_MODEL;
  if (!(value in LOCAL_MODELS)) throw new Error(`EMBEDDING_LOCAL_MODEL="${value}": one of ${LOCAL_MODEL_IDS.join(', ')}`);
  return value as LocalModelId;
}
