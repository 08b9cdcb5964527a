import { AppError } from '../errors.ts';

// What the domain asks of an embedding model, independent of where it runs: in this process (infra/embeddings/local.ts)
// or behind the OpenAI `/v1/embeddings` protocol (infra/embeddings/openai.ts).

// The width of every stored vector: the column is vector(384) and its HNSW index needs one fixed width.
export const EMBEDDING_DIMENSIONS = 384;

export interface Embedder {
  // Names the model and whatever changes its vectors (for example `bge-small-en-v1.5`); stored beside every
  // vector, so a change of model re-embeds in the background instead of mixing incomparable vectors.
  readonly model: string;
  // Vectors for stored texts, in input order, each of EMBEDDING_DIMENSIONS unit-length floats.
  embedDocuments(texts: string[]): Promise<Float32Array[]>;
  // Vectors for search queries (with the model's query instruction, if it has one), same shape.
  embedQueries(texts: string[]): Promise<Float32Array[]>;
}

// No vector could be had (the provider is down, slow, or answered something that is not a vector).
export const embeddingsUnavailable = (detail: string): AppError => new AppError('unavailable', 'embeddings_unavailable', detail);
