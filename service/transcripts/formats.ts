import type { LogEntry, LogFormat } from './types.js';
import { cliaLink, type ChainLink } from './clia-chain.js';
import { cliaTitle, type ProgramTitle } from './clia-title.js';
import { cliaDirectory, normalizeClia, normalizeCliaAgent } from './clia.js';
import { peekClia, peekCliaAgent } from './clia-peek.js';
import { normalizeClib, peekClib } from './clib.js';
import { clibRolloutDirectory, clibRolloutUsageLine, normalizeClibRollout, peekClibRollout } from './clib-rollout.js';
import { readClibRolloutUsage } from './clib-rollout-usage.js';
import type { LineContext } from './common.js';
import type { Peek } from './quick.js';
import { normalizeRuntimea, peekRuntimea } from './runtimea.js';

/** Readers of whole logs that need only some of their lines (see `needs`). */
export type Consumer = 'usage';

/**
 * A consumer's reading of a raw line by bytes: the entries the consumer would take from the
 * normalized line (only the fields it uses) with the same effect on `ctx.memo`, [] for a line
 * it needs nothing from, undefined when unsure (the line then goes through `needs`, `narrow`
 * and the parser as without it).
 */
export type LineRead = (line: Buffer, ctx: LineContext) => LogEntry[] | undefined;

export interface Format {
  /** A parsed record -> what it yields, in order. Pure. */
  normalize(record: unknown, ctx: LineContext): LogEntry[];
  /** The roles of the messages a raw line yields, when certain without parsing. */
  peek: Peek;
  /**
   * Per consumer, the byte markers of the lines it needs: a line holding none of them yields
   * nothing that consumer uses, and the pipeline leaves it unparsed. The programs write
   * compact JSON and a quote inside a string is escaped, so an unescaped `"key":"value"` is
   * structure, never text (a marker may match more lines than needed, never fewer).
   */
  needs: Readonly<Record<Consumer, readonly string[]>>;
  /**
   * Per consumer, of the lines `needs` selects, a finer look at bytes: false for a line that
   * surely yields nothing the consumer uses (left unparsed), true when unsure.
   */
  narrow?: Readonly<Partial<Record<Consumer, (line: Buffer) => boolean>>>;
  /** Per consumer, a reader by bytes tried on each line before the markers (LineRead). */
  read?: Readonly<Partial<Record<Consumer, LineRead>>>;
  /** The working directory a record states, for the programs' own histories (docs/history.md). */
  directory?(record: unknown): string | undefined;
  /**
   * A raw line's place in the conversation tree, for formats whose records form one
   * (Claude Code's own records): pages and counts follow the current branch only.
   */
  link?(line: Buffer): ChainLink | undefined;
  /** The session's title a raw line states, for formats whose program writes one (docs/history.md). */
  title?(line: Buffer): ProgramTitle | undefined;
}

export const FORMATS: Readonly<Record<LogFormat, Format>> = {
  runtimea: {
    normalize: normalizeRuntimea,
    peek: peekRuntimea,
    // Prompts, assistant records (usage, tool calls, replies), nested tool calls; not tool results.
    needs: { usage: ['"role":"user"', '"role":"assistant"', '"role":"custom"'] },
  },
  clia: {
    normalize: normalizeClia,
    peek: peekClia,
    // Prompts, assistant blocks (tool calls, replies, and the time a `result` inherits), results.
    needs: { usage: ['"type":"user"', '"type":"assistant"', '"type":"result"', '"type":"system"'] },
    directory: cliaDirectory,
    link: cliaLink,
    title: cliaTitle,
  },
  'clia-agent': {
    normalize: normalizeCliaAgent,
    peek: peekCliaAgent,
    needs: { usage: ['"type":"user"', '"type":"assistant"', '"type":"result"', '"type":"system"'] },
    directory: cliaDirectory,
  },
  clib: {
    normalize: normalizeClib,
    peek: peekClib,
    // Prompts, completed items (tool calls, replies), turn ends with their usage.
    needs: { usage: ['"type":"user.message"', '"type":"item.completed"', '"type":"turn.completed"', '"type":"turn.failed"'] },
  },
  'clib-rollout': {
    normalize: normalizeClibRollout,
    peek: peekClibRollout,
    // Messages and tool calls, the turn's model, token counts; a sub-agent's parent and where its replay of the parent's history ends.
    needs: { usage: ['"type":"response_item"', '"type":"turn_context"', '"type":"token_count"', '"type":"session_meta"', '"type":"thread_settings_applied"', '"trigger_turn":true'] },
    // Of the response items, only prompts, replies and tool calls (not tool output, reasoning, instructions).
    narrow: { usage: clibRolloutUsageLine },
    // Usage reads the lines of the shape Codex writes by bytes; the others as above.
    read: { usage: readClibRolloutUsage },
    directory: clibRolloutDirectory,
  },
};

export type { LineContext } from './common.js';
