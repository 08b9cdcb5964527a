import * as chrono from 'chrono-node';

// Questions that carry time ("last week", "in June", "on October 13, 2023", "4 years ago") name a window of event
// time (occurred_at), read against a reference time (the request's, or now) by chrono-node, English only, in UTC.
// The window spans the most precise part the words fix: a day (one day either side, for "the day before" and time
// zones), a month, a year; relative words that fix none of them ("last weekend") a week either side; a time of day
// alone none. Of several phrases, the most precise wins, the last on a tie. Words it cannot read are simply searched
// as words.

export interface TimeWindow {
  // The words that named it, as written in the question.
  phrase: string;
  // Epoch ms, inclusive.
  after: number;
  before: number;
}

const DAY = 86_400_000;
const RELATIVE = /\b(week|weekend|ago|last|past|recently|earlier)\b/i;

export function timeWindowOf(text: string, referenceMs: number): TimeWindow | null {
  const found = chrono.parse(text, { instant: new Date(referenceMs), timezone: 'UTC' }, { forwardDate: false });
  let best: { precision: number; window: TimeWindow } | null = null;
  for (const result of found) {
    const window = windowOf(result);
    if (window && (!best || window.precision >= best.precision)) best = window;
  }
  return best?.window ?? null;
}

function windowOf(result: chrono.ParsedResult): { precision: number; window: TimeWindow } | null {
  const start = result.start;
  const at = start.date();
  if (Number.isNaN(at.getTime())) return null;
  const phrase = result.text;
  const year = at.getUTCFullYear();
  const month = at.getUTCMonth();
  if (start.isCertain('day')) {
    const day = Date.UTC(year, month, at.getUTCDate());
    return { precision: 3, window: { phrase, after: day - DAY, before: day + 2 * DAY - 1 } };
  }
  if (start.isCertain('month'))
    return { precision: 2, window: { phrase, after: Date.UTC(year, month, 1), before: Date.UTC(year, month + 1, 1) - 1 } };
  if (start.isCertain('year'))
    return { precision: 1, window: { phrase, after: Date.UTC(year, 0, 1), before: Date.UTC(year + 1, 0, 1) - 1 } };
  // A time of day alone ("the 9:30 standup") names no window; relative words ("last weekend") a week either side.
  if (!RELATIVE.test(phrase)) return null;
  return { precision: 0, window: { phrase, after: at.getTime() - 7 * DAY, before: at.getTime() + 7 * DAY } };
}
