import type { LogEntry } from './types.js';
import { normalizeClia } from './clia.js';
import { linkOf, onBranch } from './clia-chain.js';
import { isObject, isoTime, messageEntry, str, textOf, type LineContext } from './common.js';

/**
 * The clia record, the service's older per-session record
 * `~/clia-space/<agent_id>/.sessions/<session_id>.json`: one JSON document per session, read only. Its entry fields sit at the top level (sessionId,
 * title, updatedAt, directory, directoryHistory, nativeSessionId); its messages, when it
 * has any, are a `messages` array of either CLI records (`type` user/assistant/result, as
 * in the JSONL store) or plain `{role, content | text, timestamp}` objects.
 */
export function cliaRecordMessages(doc: unknown, fallbackTime: string): LogEntry[] {
  if (!isObject(doc) || !Array.isArray(doc.messages)) return [];
  const out: LogEntry[] = [];
  const off = offBranch(doc.messages);
  doc.messages.forEach((record, position) => {
    if (off.has(position)) return;
    const ctx: LineContext = { position, fallbackTime };
    if (isObject(record) && typeof record.type === 'string') {
      out.push(...normalizeClia(record, ctx));
      return;
    }
    if (!isObject(record)) return;
    const role = record.role === 'user' || record.role === 'assistant' ? record.role : undefined;
    if (!role) return;
    const text = str(record.text) ?? textOf(record.content);
    out.push(messageEntry(ctx, str(record.id) ?? `@${position}`, role, isoTime(record.timestamp), { text }));
  });
  return out;
}

/**
 * The positions of CLI records off the conversation's current branch, when the records form
 * a tree (Claude Code's own records, with `parentUuid`): as for its history files
 * (docs/history.md). None for stream-json records and plain messages.
 */
function offBranch(records: unknown[]): Set<number> {
  const links = records.flatMap((record, position) => {
    const link = linkOf(record);
    return link && !link.side ? [{ ...link, position }] : [];
  });
  const on = onBranch(links);
  const off = new Set<number>();
  links.forEach((link, i) => {
    if (on[i] === 0) off.add(link.position);
  });
  return off;
}
