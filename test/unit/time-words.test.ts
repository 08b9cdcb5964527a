import { describe, expect, it } from 'vitest';
import { timeWindowOf } from '../../domain/search/time-words.ts';

// Time words in a question, read as a window of event time against a reference time (UTC).
const at = Date.UTC(2023, 9, 20, 12); // 20 October 2023, noon
const day = (y: number, m: number, d: number) => Date.UTC(y, m - 1, d);
const DAY = 86_400_000;

describe('time words', () => {
  it('reads a date as its day, with a day either side', () => {
    expect(timeWindowOf('What painting did Melanie show on October 13, 2023?', at)).toEqual({
      phrase: 'October 13, 2023',
      after: day(2023, 10, 12),
      before: day(2023, 10, 15) - 1,
    });
    expect(timeWindowOf('what did I say yesterday about deploys', at)).toMatchObject({
      phrase: 'yesterday',
      after: day(2023, 10, 18),
      before: day(2023, 10, 21) - 1,
    });
  });

  it('reads a month as the month, of the last year it fell in before the reference, and a year as the year', () => {
    expect(timeWindowOf('When did Melanie go camping in June?', at)).toEqual({
      phrase: 'June',
      after: day(2023, 6, 1),
      before: day(2023, 7, 1) - 1,
    });
    expect(timeWindowOf('What did John attend in March 2022?', at)).toMatchObject({ after: day(2022, 3, 1), before: day(2022, 4, 1) - 1 });
    expect(timeWindowOf('Where did John go on a road trip last year?', at)).toMatchObject({
      after: day(2022, 1, 1),
      before: day(2023, 1, 1) - 1,
    });
  });

  it('reads relative words that fix no date as a week either side, and prefers the most precise phrase', () => {
    const weekend = timeWindowOf('What event did John volunteer at last weekend?', at)!;
    expect(weekend.phrase).toBe('last weekend');
    expect(weekend.before - weekend.after).toBe(14 * DAY);
    expect(timeWindowOf('What did Maria do last weekend before April 10, 2023?', at)).toMatchObject({ phrase: 'April 10, 2023' });
  });

  it('names no window for a question without time words, a time of day alone, or a name like May', () => {
    expect(timeWindowOf('what is the staging database refreshed from', at)).toBeNull();
    expect(timeWindowOf('who runs the 9:30 standup', at)).toBeNull();
    expect(timeWindowOf('When is May coming over?', at)).toBeNull();
  });
});
