// A hit's relevance: the chance, in [0, 1], that a person would judge it relevant to the query, the same scale in
// every mode, so that one floor (min_relevance) means the same whatever the mode. Each mode maps what its lists
// measured through a logistic curve fitted on the project's quality sets pooled (Cranfield, CISI, the paraphrase
// set, LoCoMo, and questions whose answer was never stored; bench/quality/run-relevance.ts fits and reports it):
// - lexical: the BM25 score as a share of the query's ceiling (what a document holding every query term could
//   score, scoring.ts), so that a query's length and its words' rarity do not move the scale;
// - semantic: the cosine similarity (a passage's with its handicap, as ranked);
// - hybrid: both, the lexical share of hybrid's own list (thread context included; for a chunk of a thread that
//   holds the query's words, its thread's score when higher: thread-terms.ts) and the cosine; a memory one list
//   missed counts 0 for words, and for meaning the worst cosine that list kept (it scored no better).
// Only absolute scores count, so that a scope's size or subject does not move its scale. (A cosine's lift over the
// scope's background, the list's last score, was tried: it kept a few more answers and let more never-stored
// questions through, and a small scope has no background.)
// Within an answer relevance never rises down the ranking: a hybrid hit ranked below one of lower relevance takes
// that lower value, so a floor always keeps a prefix of the ranking.

import type { ModelRelevance, RelevanceCurve } from '../store/embedder.ts';
import type { SearchMode } from './modes.ts';

export interface RelevanceInputs {
  // The lexical score over the query's ceiling, capped at 1 (0: not found by words).
  lexical: number;
  // The cosine similarity, or null when the mode has no semantic list.
  semantic: number | null;
}

// Logistic coefficients per mode: relevance = 1 / (1 + exp(-(bias + lexical * x + semantic * c))). The semantic and
// hybrid curves are the default local model's (bge-small-en-v1.5, int8); a model with a scale of its own brings its
// own (Embedder.relevance), and one that has none fitted (a provider's) is read with these.
export const RELEVANCE_CURVES: Record<SearchMode, RelevanceCurve> = {
  lexical: { bias: -2.86, lexical: 6.04, semantic: 0 },
  semantic: { bias: -12.54, lexical: 0, semantic: 15.26 },
  hybrid: { bias: -11, lexical: 1.94, semantic: 12.94 },
};

// The floor the documentation recommends for "nothing relevant": of the floors tried (0.05 to 0.4), the one that best
// tells apart, in every mode, the questions whose answer the search found from questions never answered (the mean of
// the two rates in run-relevance.ts). The judged sets label few hits relevant, so a relevant hit's chance is often
// well under one half.
export const RECOMMENDED_FLOOR = 0.15;

export function relevanceOf(mode: SearchMode, inputs: RelevanceInputs, model?: ModelRelevance): number {
  const curve = mode === 'lexical' || !model ? RELEVANCE_CURVES[mode] : model[mode];
  const z = curve.bias + curve.lexical * inputs.lexical + curve.semantic * (inputs.semantic ?? 0);
  return 1 / (1 + Math.exp(-z));
}

// Each value no higher than the one before it (a running minimum), in ranking order.
export function nonIncreasing(values: number[]): number[] {
  let floor = Infinity;
  return values.map((v) => (floor = Math.min(floor, v)));
}

// Four decimals are enough for a floor and keep answers short.
export const rounded = (x: number): number => Math.round(x * 10_000) / 10_000;
