import type { TurnUsage } from '../runtime.js';

/**
 * The gateway's POST /v1/chat/completions stream (recorded in test/fixtures/runtimea/): plain
 * `data: <json>` frames, no event names, no comments, then `data: [DONE]`. A chunk carries a
 * role delta, a content delta, a finish_reason, the usage of the whole run (with
 * stream_options.include_usage), or an `error` object for a run that failed mid-stream.
 * Pure: bytes in, neutral pieces out.
 */
export type ChatPiece =
  | { kind: 'run'; id: string }
  | { kind: 'text'; text: string }
  | { kind: 'finish'; reason: string }
  | { kind: 'usage'; usage: TurnUsage }
  | { kind: 'error'; message: string }
  | { kind: 'done' };

/** Splits an SSE byte stream into the payloads of its `data:` fields, one per event. */
export class SseDataSplitter {
  private buffer = '';
  private data: string[] = [];

  push(chunk: string): string[] {
    this.buffer += chunk;
    const out: string[] = [];
    let nl: number;
    while ((nl = this.buffer.indexOf('\n')) !== -1) {
      const line = this.buffer.slice(0, nl).replace(/\r$/, '');
      this.buffer = this.buffer.slice(nl + 1);
      if (line === '') {
        if (this.data.length) out.push(this.data.join('\n'));
        this.data = [];
      } else if (line.startsWith('data:')) {
        this.data.push(line.slice(5).replace(/^ /, ''));
      }
      // `event:`, `id:`, `retry:` and `:` comments carry nothing the chat stream uses.
    }
    return out;
  }
}

export function parseChatData(data: string): ChatPiece[] {
  if (data.trim() === '[DONE]') return [{ kind: 'done' }];
  let chunk: any;
  try {
    chunk = JSON.parse(data);
  } catch {
    return [];
  }
  if (!chunk || typeof chunk !== 'object') return [];
  if (chunk.error) return [{ kind: 'error', message: String(chunk.error.message ?? chunk.error.type ?? 'unknown error') }];
  const pieces: ChatPiece[] = [];
  if (typeof chunk.id === 'string') pieces.push({ kind: 'run', id: chunk.id });
  for (const choice of Array.isArray(chunk.choices) ? chunk.choices : []) {
    const content = choice?.delta?.content;
    if (typeof content === 'string' && content) pieces.push({ kind: 'text', text: content });
    if (typeof choice?.finish_reason === 'string') pieces.push({ kind: 'finish', reason: choice.finish_reason });
  }
  if (chunk.usage && typeof chunk.usage === 'object') pieces.push({ kind: 'usage', usage: usageOf(chunk.usage) });
  return pieces;
}

/**
 * The gateway's usage is summed over the run's model calls, with prompt_tokens = input +
 * cacheRead and total = prompt + completion + cacheWrite (research runtimea §3).
 */
function usageOf(u: { prompt_tokens?: number; completion_tokens?: number; total_tokens?: number; prompt_tokens_details?: { cached_tokens?: number } }): TurnUsage {
  const prompt = u.prompt_tokens ?? 0;
  const output = u.completion_tokens ?? 0;
  const cacheRead = u.prompt_tokens_details?.cached_tokens ?? 0;
  return { input: Math.max(0, prompt - cacheRead), output, cacheRead, cacheWrite: Math.max(0, (u.total_tokens ?? prompt + output) - prompt - output) };
}

/** The error body of a refused request (`{"error":{"message","type"}}`), as one sentence. */
export function refusalMessage(status: number, body: string): string {
  let detail = body.trim().slice(0, 500);
  try {
    const parsed = JSON.parse(body) as { error?: { message?: string } };
    if (parsed.error?.message) detail = parsed.error.message;
  } catch {
    // not JSON: keep the text
  }
  if (status === 401 || status === 403) return `The runtimea gateway refused the service's token (${status}): ${detail}`;
  return `The runtimea gateway refused the turn (${status}): ${detail}`;
}
