import { isObject, str } from './common.js';
import { topType } from './quick.js';

/**
 * A session's title as the program itself states it. `rank` orders the kinds: a name the
 * user gave beats one the program made; among equals the newest wins.
 */
export interface ProgramTitle {
  text: string;
  rank: number;
}

/** A name the user gave (Claude Code's `/rename`, `-n`; Codex's thread name). */
export const USER_NAMED = 2;

/**
 * Claude Code's title records (bookkeeping lines, `type` first): `custom-title
 * {customTitle}` (the user's name: `/rename`, `-n`; re-appended after each turn), `ai-title
 * {aiTitle}` (made by the program), the legacy `summary {summary, leafUuid}`.
 */
const KINDS: Readonly<Record<string, readonly [field: string, rank: number]>> = {
  'custom-title': ['customTitle', USER_NAMED],
  'ai-title': ['aiTitle', 1],
  summary: ['summary', 0],
};

/** The title a raw line states, if it is one of Claude Code's title records. */
export function cliaTitle(line: Buffer): ProgramTitle | undefined {
  const type = topType(line);
  const kind = type === undefined ? undefined : KINDS[type];
  if (!kind) return undefined;
  let record: unknown;
  try {
    record = JSON.parse(line.toString('utf8'));
  } catch {
    return undefined;
  }
  const text = isObject(record) ? str(record[kind[0]])?.trim() : undefined;
  return text ? { text, rank: kind[1] } : undefined;
}

/** The title to keep of an older and a newer one: the higher kind, the newer among equals. */
export function newerTitle(older: ProgramTitle | undefined, newer: ProgramTitle | undefined): ProgramTitle | undefined {
  if (!older) return newer;
  if (!newer) return older;
  return newer.rank >= older.rank ? newer : older;
}
