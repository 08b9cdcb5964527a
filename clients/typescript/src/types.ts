// Names for the shapes the helpers take and give, picked out of the generated schema so they never drift.
import type { components, paths } from './schema.ts';

type Json<T> = T extends { content: { 'application/json': infer B } } ? B : never;
type RequestBody<Operation> = Operation extends { requestBody?: infer R } ? Json<NonNullable<R>> : never;
type Ok<Operation> = Operation extends { responses: { 200: infer R } } ? Json<R> : never;

export type Memory = components['schemas']['Memory'];
// A memory found by a search or by similarity, with its score (and relevance, for searches).
export type SearchHit = components['schemas']['ScoredMemory'];
export type BatchCreateResult = components['schemas']['BatchCreateResult'];
export type BatchItemFailure = components['schemas']['BatchItemFailure'];

export type CreateMemoryBody = RequestBody<paths['/api/memories']['post']>;
export type UpdateMemoryBody = RequestBody<paths['/api/memories/{id}']['patch']>;
export type SearchBody = RequestBody<paths['/api/memories/search']['post']>;
export type BulkSearchBody = RequestBody<paths['/api/memories/search/bulk']['post']>;
export type ListBody = RequestBody<paths['/api/memories/list']['post']>;
export type SimilarQuery = NonNullable<paths['/api/memories/{id}/similar']['get']['parameters']['query']>;

// A search's whole answer: its hits, and how many memories it could not score by meaning yet.
export type SearchResult = Ok<paths['/api/memories/search']['post']>;
export type BulkSearchResult = Ok<paths['/api/memories/search/bulk']['post']>['results'][number];
