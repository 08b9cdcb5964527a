import { describe, expect, it } from 'vitest';
import { asksTime } from '../../domain/search/answer-cues.ts';

describe('asksTime', () => {
  it('reads a question that asks for a time', () => {
    for (const q of [
      'When did Caroline go to the support group?',
      "when's the next offsite?",
      'Since when has the nightly build been red?',
      'what year did we move to Postgres?',
      'Which month is the audit in?',
      'How long ago did Jon lose his job?',
      'how many weeks does onboarding take?',
    ])
      expect(asksTime(q), q).toBe(true);
  });

  it('leaves out "when" as a condition, and questions of other kinds', () => {
    for (const q of [
      'when I propose a warehouse edit, does the pipeline rebuild everything?',
      'when someone leaves the group, how quickly do they lose access?',
      'Where did Melanie go camping?',
      'what time zone is Keiko in?',
      'How many pets does Andrew have?',
      'lighthouse ferry',
    ])
      expect(asksTime(q), q).toBe(false);
  });
});
