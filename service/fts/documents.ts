import type { Message } from '../sessions/types.js';

/**
 * What one message contributes to the index: its text, and for a tool message the call
 * (tool name and input) and the result (output) as separate documents, so a hit says which
 * part matched. Pure.
 */
export type DocKind = 'text' | 'tool_call' | 'tool_result';

export interface Doc {
  kind: DocKind;
  body: string;
  toolName: string | null;
}

/** Snippet markers (private-use characters), removed from indexed text so they stay unambiguous. */
export const MARK_START = '\uE000';
export const MARK_END = '\uE001';

/** Longest body indexed per document (message fields are already capped at 64K characters each). */
const MAX_BODY_CHARS = 256 * 1024;
const MAX_DEPTH = 16;
/** The pipeline's stand-in for a line that is not JSON: nothing a user wrote. */
const UNREADABLE = '[unreadable record:';

export function documentsOf(message: Message): Doc[] {
  const docs: Doc[] = [];
  const text = message.text.trim();
  if (text && !text.startsWith(UNREADABLE)) docs.push({ kind: 'text', body: clean(message.text), toolName: null });
  const call = message.tool_call;
  if (call) {
    const body = [call.name, ...valuesOf(call.input)].filter(Boolean).join('\n');
    if (body) docs.push({ kind: 'tool_call', body: clean(body), toolName: call.name || null });
  }
  const result = message.tool_result;
  if (result) {
    const body = valuesOf(result.output).join('\n');
    if (body.trim()) docs.push({ kind: 'tool_result', body: clean(body), toolName: result.name ?? call?.name ?? null });
  }
  return docs;
}

/**
 * The strings and numbers inside a JSON value, depth first. Keys are left out (every call
 * of a tool has the same ones), and so are `type` tags of content blocks.
 */
function valuesOf(value: unknown, depth = 0, out: string[] = []): string[] {
  if (typeof value === 'string') {
    if (value) out.push(value);
  } else if (typeof value === 'number' && Number.isFinite(value)) out.push(String(value));
  else if (depth < MAX_DEPTH && Array.isArray(value)) for (const v of value) valuesOf(v, depth + 1, out);
  else if (depth < MAX_DEPTH && value !== null && typeof value === 'object') {
    for (const [k, v] of Object.entries(value)) if (k !== 'type') valuesOf(v, depth + 1, out);
  }
  return out;
}

function clean(body: string): string {
  const capped = body.length > MAX_BODY_CHARS ? body.slice(0, MAX_BODY_CHARS) : body;
  return capped.includes(MARK_START) || capped.includes(MARK_END) ? capped.replaceAll(MARK_START, '').replaceAll(MARK_END, '') : capped;
}
