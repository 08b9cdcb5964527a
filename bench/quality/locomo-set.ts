// LoCoMo (Maharana et al., 2024) as the benchmarks read it: its data/locomo10.json, from LOCOMO_JSON (the data is
// CC BY-NC and not kept here; scripts/bench.sh writes it from ../shared/data/locomo). A turn is saved as one memory,
// "Speaker: text" with a shared photo's caption appended; its evidence id is "D<session>:<turn>".
import { readFileSync } from 'node:fs';

export interface Turn {
  speaker: string;
  dia_id: string;
  text: string;
  blip_caption?: string;
}
export interface Sample {
  sample_id: string;
  conversation: Record<string, unknown> & { speaker_a: string; speaker_b: string };
  qa: { question: string; evidence: string[]; category: number }[];
}

export function readLocomo(): Sample[] {
  const file = process.env.LOCOMO_JSON;
  if (!file) throw new Error("set LOCOMO_JSON to the path of LoCoMo's data/locomo10.json");
  return JSON.parse(readFileSync(file, 'utf8')) as Sample[];
}

export const turnLine = (t: Turn): string => `${t.speaker}: ${t.text}${t.blip_caption ? ` [shares a photo of ${t.blip_caption}]` : ''}`;
export const sessionsOf = (s: Sample): [string, Turn[]][] =>
  Object.entries(s.conversation).filter(([key]) => /^session_\d+$/.test(key)) as [string, Turn[]][];
// When a session happened, from its `session_N_date_time` ("1:56 pm on 8 May, 2023"), as epoch ms (UTC); undefined
// when it is missing or not in that form.
export function sessionTime(s: Sample, session: string): number | undefined {
  const written = String(s.conversation[`${session}_date_time`] ?? '');
  const m = /^(\d{1,2}):(\d{2}) (am|pm) on (\d{1,2}) (\w+),? (\d{4})$/i.exec(written.trim());
  if (!m) return undefined;
  const month = MONTHS.indexOf(m[5]!.toLowerCase());
  if (month < 0) return undefined;
  const hour = (Number(m[1]) % 12) + (m[3]!.toLowerCase() === 'pm' ? 12 : 0);
  return Date.UTC(Number(m[6]), month, Number(m[4]), hour, Number(m[2]));
}
const MONTHS = ['january', 'february', 'march', 'april', 'may', 'june', 'july', 'august', 'september', 'october', 'november', 'december'];

// The conversation's last session time: the "now" its questions are asked at.
export const conversationEnd = (s: Sample): number | undefined =>
  Math.max(...sessionsOf(s).map(([key]) => sessionTime(s, key) ?? -Infinity)) || undefined;

// A question's evidence ids; a few entries hold several ids or stray spaces.
export const evidenceOf = (q: { evidence: string[] }): string[] => q.evidence.flatMap((e) => e.match(/D\d+:\d+/g) ?? []);
