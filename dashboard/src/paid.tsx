import { Link } from './router.tsx';

// What the paid plan unlocks, said before a click: the sections that need it (marked in the header for a free org,
// with a note on their page) and the list the billing page shows. LLM work also runs with the caller's own key.
export const PAID_SECTIONS: Record<string, string> = {
  '/chat': 'Chat answers from your memories with a language model',
  '/entities': 'Entities are extracted from new memories by a language model',
  '/consolidation': 'Consolidation finds duplicates and contradictions, and merges them with a language model',
};

export const PAID_UNLOCKS = [
  'No limit on memories or storage (the free plan holds 500 memories and 50 MB)',
  'Chat grounded on your memories and runbooks',
  'Entities and a synopsis with facts, extracted from every memory saved',
  'Facts distilled from conversations (infer), kept current as later ones change them',
  'Consolidation: duplicates and contradictions found, then merged',
];

// On a paid section's page, for a free org: what it needs, and where to get it.
export function PaidNote({ path, free }: { path: string; free: boolean }) {
  const what = PAID_SECTIONS[path];
  if (!free || !what) return null;
  return (
    <p class="paid-note" role="note">
      {what}: part of the paid plan (or your own LLM provider key, sent with each call).{' '}
      <Link to="/billing">See what the paid plan unlocks</Link>
    </p>
  );
}
