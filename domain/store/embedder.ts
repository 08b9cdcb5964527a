import { AppError } from '../errors.ts';

// What the domain asks of an embedding model, independent of where it runs: in this process (infra/embeddings/local.ts)
// or behind the OpenAI `/v1/embeddings` protocol (infra/embeddings/openai.ts).

// The width of every stored vector: the column is vector(384) and its HNSW index needs one fixed width.
export const EMBEDDING_DIMENSIONS = 384;

// How a search hit's relevance is read from what its lists measured (domain/search/relevance.ts): the logistic
// curve's bias and weights over the BM25 share of the query's ceiling and the cosine.
export interface RelevanceCurve {
  bias: number;
  lexical: number;
  semantic: number;
}
// A model's own curves for the modes that read its cosines: each model has its own scale.
export interface ModelRelevance {
  semantic: RelevanceCurve;
  hybrid: RelevanceCurve;
}

export interface Embedder {
  // Names the model and whatever changes its vectors (for example `bge-small-en-v1.5`); stored beside every
  // vector, so a change of model re-embeds in the background instead of mixing incomparable vectors.
  readonly model: string;
  // The cosine similarity from which two stored texts count as saying the same thing (consolidation's semantic
  // duplicates), on the model's own scale; unset, SEMANTIC_DUPLICATE_MIN (domain/consolidation/detect.ts).
  readonly nearDuplicate?: number;
  // The relevance curves fitted for this model's cosines (bench/quality/run-relevance.ts); unset, the ones fitted
  // for the default local model (RELEVANCE_CURVES, domain/search/relevance.ts).
  readonly relevance?: ModelRelevance;
  // Vectors for stored texts, in input order, each of EMBEDDING_DIMENSIONS unit-length floats. `orgId` says whose
  // texts they are: a model this process runs is shared by the orgs in turn, so that one org's backlog does not
  // hold up another's texts (infra/embeddings/turns.ts); a provider over HTTP takes every org's requests at once.
  embedDocuments(texts: string[], orgId?: string): Promise<Float32Array[]>;
  // Vectors for search queries (with the model's query instruction, if it has one), same shape and turns.
  embedQueries(texts: string[], orgId?: string): Promise<Float32Array[]>;
  // On shutdown, after the last caller: lets calls under way finish, refuses new ones, and releases the model.
  close(): Promise<void>;
}

// The provider refused the text itself (too long for it, or not acceptable): retrying will not help, so the
// memory goes without a vector and stays findable lexically.
export const embeddingInputRefused = (detail: string): AppError => new AppError('upstream', 'embedding_input_refused', detail);

// Scales a vector to unit length (cosine distance then equals the inner product's complement), or null for a zero
// vector, which has no direction to compare.
export function unitLength(vector: ArrayLike<number>): Float32Array | null {
  let sum = 0;
  for (let i = 0; i < vector.length; i++) sum += vector[i]! * vector[i]!;
  const norm = Math.sqrt(sum);
  return norm === 0 || !Number.isFinite(norm) ? null : Float32Array.from(vector, (x) => x / norm);
}

// No vector could be had (the provider is down, slow, or answered something that is not a vector).
export const embeddingsUnavailable = (detail: string): AppError => new AppError('unavailable', 'embeddings_unavailable', detail);
