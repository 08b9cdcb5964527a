import type { EntityManager } from '@mikro-orm/postgresql';
import { query, sql } from '../sql.ts';
import { byRank, type Fused } from './fusion.ts';

// A question that asks for a time ("when did we ship it?", "how long ago", "what year") is answered by a memory that
// states one ("we shipped it last Friday"), whatever its other words: the expected answer type of question answering.
// So hybrid raises the fused hits that state a time by TIME_ANSWER_GAIN when the question asks for one.
export const TIME_ANSWER_GAIN = 0.25;

const ASKS_TIME =
  /^\s*(since )?when('s| (is|are|was|were|am|do|does|did|will|would|should|shall|can|could|has|have|had|might|must)\b)|\b(what|which) (year|month|day|date|time(?! ?zone)|week|season)\b|\bhow long (ago|since|has|have|had|did|was|were)\b|\bhow (many|much) (years|months|weeks|days)\b/i;

export const asksTime = (question: string): boolean => ASKS_TIME.test(question);

// What states a time, in PostgreSQL's regular expressions (\m, \M: word boundaries): a relative day, a day of the
// month, a month or weekday by name, a year, a date, a clock time, a rhythm, a span ("two weekends ago").
const UNITS = 'minutes?|hours?|days?|weeks?|weekends?|months?|years?|summers?|winters?|springs?|autumns?|falls?';
const DAYS = 'monday|tuesday|wednesday|thursday|friday|saturday|sunday|mon|tue|tues|wed|thu|thurs|fri|sat|sun';
const MONTHS =
  'january|february|march|april|june|july|august|september|october|november|december|jan|feb|mar|apr|jun|jul|aug|sep|sept|oct|nov|dec';
const STATES_TIME = [
  `\\m(yesterday|today|tonight|tomorrow|ago|recently|lately)\\M|\\mthe other (day|night|week|weekend)\\M`,
  `\\m(on|by|until|since|before|after) the \\d{1,2}(st|nd|rd|th)\\M`,
  `\\m(last|next|this|past|coming|previous|early|late|mid) (${UNITS}|${DAYS}|morning|evening|night|afternoon)\\M`,
  `\\m(monday|tuesday|wednesday|thursday|friday|saturday|sunday)s?\\M`,
  `\\m(${MONTHS})\\M`,
  `\\mmay \\d`,
  `\\m(in|on|since|during|by) may\\M`,
  `\\m(19|20)\\d\\d\\M`,
  `\\m\\d{1,2}/\\d{1,2}\\M`,
  `\\m\\d{1,2}(:\\d\\d)? ?(am|pm)\\M|\\m\\d{1,2}:\\d\\d\\M|\\m(noon|midnight|q[1-4])\\M`,
  `\\m(daily|weekly|biweekly|monthly|quarterly|yearly|annually|nightly|hourly)\\M`,
  `\\mevery (other )?(${UNITS}|${DAYS}|morning|evening|night)\\M`,
  `\\m(\\d+|a|an|one|two|three|four|five|six|seven|eight|nine|ten|few|couple of|several) (${UNITS})\\M`,
].join('|');

// A hit's text is read up to this many characters: it bounds what a search pays for long memories.
export const TIME_TEXT_MAX = 2000;

// The fused list with the hits that state a time raised, best first (ties by id), and which gained (explain).
export async function withTimeAnswers(
  em: EntityManager,
  orgId: string,
  question: string,
  fused: Fused[],
): Promise<{ ranked: Fused[]; gains: Set<string> }> {
  const gains = new Set<string>();
  if (fused.length === 0 || !asksTime(question)) return { ranked: fused, gains };
  const rows = await query(
    em,
    sql<{ id: string }>`select m.id from memories m where m.org_id = ${orgId} and m.id = any(${fused.map((f) => f.id)}::uuid[])
      and left(m.content, ${TIME_TEXT_MAX}) ~* ${STATES_TIME}`,
  );
  for (const r of rows) gains.add(r.id);
  const ranked = fused.map((f) => (gains.has(f.id) ? { ...f, score: f.score + TIME_ANSWER_GAIN } : f)).sort(byRank);
  return { ranked, gains };
}
