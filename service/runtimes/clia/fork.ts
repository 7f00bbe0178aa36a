import { randomUUID } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { HttpError } from '../../errors.js';
import { normalizeClia } from '../../transcripts/clia.js';
import type { CliSessionStore } from '../cli-session-store.js';
import type { ForkRequest } from '../runtime.js';
import { forkEntry } from '../fork-entry.js';
import { resumed } from '../turn-books.js';

/**
 * A fork of a clia session: a new session of the service whose transcript is the original's
 * up to the message, and whose first turn runs Claude Code's own fork:
 * `--resume <native> --resume-session-at <record uuid> --fork-session --session-id <new>`
 * (research checkpoints-2026-11.md §2.1). The CLI's own records carry the uuids; a user
 * message is the service's line, so a fork at one keeps the conversation through the turn
 * before it (the prompt itself is not part of what the CLI resumes).
 */
export interface CliaForkOf {
  nativeSessionId: string;
  /** The record to resume at; null for the whole conversation. */
  at: string | null;
}

export async function forkCliaSession(store: CliSessionStore, request: ForkRequest): Promise<{ sessionId: string }> {
  const found = resumed(await store.find(request.sessionId));
  const { agentId, entry } = found;
  const lines = await readFile(store.transcriptFile(agentId, request.sessionId), 'utf8')
    .then((t) => t.split('\n').filter(Boolean))
    .catch(() => [] as string[]);
  const cut = cutOf(lines, request.messageId);
  const sessionId = randomUUID();
  const forkOf: CliaForkOf = { nativeSessionId: entry.nativeSessionId ?? request.sessionId, at: request.messageId === undefined ? null : cut.at };
  // The entry before its transcript: the index never lists the fork from its log alone.
  await store.upsert(agentId, sessionId, { ...forkEntry(entry, request, sessionId), forkOf });
  await store.append(agentId, sessionId, lines.slice(0, cut.lines));
  return { sessionId };
}

/** How many transcript lines the fork keeps, and the CLI record it resumes at. */
function cutOf(lines: readonly string[], messageId: string | undefined): { lines: number; at: string | null } {
  let position = 0;
  let lastCli: { line: number; uuid: string } | null = null;
  for (let i = 0; i < lines.length; i += 1) {
    const record = parse(lines[i]!);
    const held = normalizeClia(record, { position, fallbackTime: '' }).some((e) => e.kind === 'message' && e.message.id === messageId);
    position += Buffer.byteLength(lines[i]!) + 1;
    const uuid = cliRecordUuid(record);
    if (held) {
      if (uuid) return { lines: i + 1, at: uuid };
      // The service's own prompt line: the conversation through the turn before it.
      return { lines: lastCli ? lastCli.line + 1 : 0, at: lastCli?.uuid ?? null };
    }
    if (uuid) lastCli = { line: i, uuid };
  }
  if (messageId !== undefined) throw new HttpError(400, 'message_id is not a message of this session');
  return { lines: lines.length, at: lastCli?.uuid ?? null };
}

function parse(line: string): Record<string, unknown> {
  try {
    return JSON.parse(line) as Record<string, unknown>;
  } catch {
    return {};
  }
}

/** The uuid of a record the CLI wrote (an assistant block or a tool result), not the service's prompt line. */
function cliRecordUuid(record: Record<string, unknown>): string | null {
  if (typeof record.uuid !== 'string') return null;
  if (record.type === 'assistant') return record.uuid;
  const content = (record.message as { content?: unknown } | undefined)?.content;
  if (record.type === 'user' && Array.isArray(content) && content.some((b) => (b as { type?: string }).type === 'tool_result')) return record.uuid;
  return null;
}
