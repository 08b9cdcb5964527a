import type { EntityManager } from '@mikro-orm/postgresql';
import { query, sql } from '../sql.ts';
import { byRank, type Fused } from './fusion.ts';

// Cues in a hit that it answers the question, whatever its other words, which hybrid raises the fused hits by:
// - Its speaker is named in the question. A conversation's messages carry who said them (metadata.name beside
//   metadata.role, as conversation capture saves them; a name without a role is not a speaker's), and a question
//   about a person ("what does Dana think of the migration?") is answered mostly by that person's own messages,
//   which name neither Dana nor always the question's words. Their fused score is multiplied by 1 + SPEAKER_SHARE,
//   so a message that the lists ranked low stays low.
// - It states a time when the question asks for one ("when did we ship it?" is answered by "we shipped it last
//   Friday"): the expected answer type of question answering. It gains TIME_ANSWER_GAIN.
// And one cue against: a short message ("Wow, that's great!", "Yes, show me!") mostly reacts rather than states, yet
// ranks by what its thread says around it (thread context, and the neighbours in its vector). A message (it has
// metadata.role) of fewer than SHORT_MESSAGE_BYTES bytes keeps (bytes / SHORT_MESSAGE_BYTES) ^ SHORT_MESSAGE_POWER of
// its score; memories outside conversations, however short (a fact, a preference), keep all of theirs.
export const SPEAKER_SHARE = 0.5;
export const TIME_ANSWER_GAIN = 0.25;
export const SHORT_MESSAGE_BYTES = 400;
export const SHORT_MESSAGE_POWER = 0.25;

// A question that opens with "when" and an auxiliary (not "when I deploy, does..."), or asks what year, how long ago.
const ASKS_TIME = new RegExp(
  [
    "^\\s*(since )?when('s| (is|are|was|were|am|do|does|did|will|would|should|shall|can|could|has|have|had|might|must)\\b)",
    '\\b(what|which) (year|month|day|date|time(?! ?zone)|week|season)\\b',
    '\\bhow long (ago|since|has|have|had|did|was|were)\\b',
    '\\bhow (many|much) (years|months|weeks|days)\\b',
  ].join('|'),
  'i',
);

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

// The words of a question, lowercased, that a speaker's name is looked up among.
const wordsOf = (text: string): Set<string> => new Set(text.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? []);

// A speaker is named when the question holds the first word of its name (case aside): "Dana" for "Dana Kim".
const named = (name: string | null, words: Set<string>): boolean => {
  const first = name
    ?.trim()
    .toLowerCase()
    .match(/^[\p{L}\p{N}]+/u)?.[0];
  return first !== undefined && first.length >= 2 && words.has(first);
};

export interface AnswerCues {
  ranked: Fused[];
  // What each raised hit gained for its speaker (explain's speaker_named), which gained for stating a time, and what
  // each short message lost (explain's short_message, negative).
  speakers: Map<string, number>;
  times: Set<string>;
  shortMessages: Map<string, number>;
}

export interface CueRow {
  name: string | null;
  states_time: boolean;
  // A message's length in bytes (null for a memory that is no message).
  message_bytes: number | null;
}

// What a message of this many bytes keeps of its score.
export const shortMessageShare = (bytes: number): number =>
  Math.min(1, Math.max(1, bytes) / SHORT_MESSAGE_BYTES) ** SHORT_MESSAGE_POWER;

// What the hits carry that a cue reads: a message's speaker and length, and whether the text states a time when the
// question asks for one. Read beside the threads' statement, since it needs only the fused ids.
export async function readAnswerCues(em: EntityManager, orgId: string, question: string, ids: string[]): Promise<Map<string, CueRow>> {
  if (ids.length === 0) return new Map();
  const timed = asksTime(question);
  const rows = await query(
    em,
    sql<CueRow & { id: string }>`select m.id,
        case when m.metadata ? 'role' then m.metadata->>'name' end as name,
        case when ${timed}::boolean then left(m.content, ${TIME_TEXT_MAX}) ~* ${STATES_TIME} else false end as states_time,
        case when m.metadata ? 'role' then octet_length(m.content) end as message_bytes
      from memories m where m.org_id = ${orgId} and m.id = any(${ids}::uuid[])
        and (m.metadata ? 'role' or ${timed}::boolean)`,
  );
  return new Map(rows.map((r) => [r.id, r]));
}

// The fused list with the hits that carry a cue raised and the short messages lowered, best first (ties by id).
export function raiseByCues(question: string, fused: Fused[], cues: Map<string, CueRow>): AnswerCues {
  const speakers = new Map<string, number>();
  const times = new Set<string>();
  const shortMessages = new Map<string, number>();
  const words = wordsOf(question);
  const ranked = fused
    .map((f) => {
      const row = cues.get(f.id);
      if (!row) return f;
      let score = f.score;
      if (named(row.name, words)) {
        speakers.set(f.id, score * SPEAKER_SHARE);
        score += score * SPEAKER_SHARE;
      }
      if (row.states_time) {
        times.add(f.id);
        score += TIME_ANSWER_GAIN;
      }
      const kept = row.message_bytes === null ? 1 : shortMessageShare(row.message_bytes);
      if (kept < 1) {
        shortMessages.set(f.id, score * kept - score);
        score *= kept;
      }
      return score === f.score ? f : { ...f, score };
    })
    .sort(byRank);
  return { ranked, speakers, times, shortMessages };
}
