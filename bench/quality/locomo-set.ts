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
// A question's evidence ids; a few entries hold several ids or stray spaces.
export const evidenceOf = (q: { evidence: string[] }): string[] => q.evidence.flatMap((e) => e.match(/D\d+:\d+/g) ?? []);
