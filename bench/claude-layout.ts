/**
 * The clia part of a corpus written again in Claude Code's own on-disk layout
 * (`<home>/.claude/projects/<cwd key>/<session id>.jsonl`), which ccusage reads: the same
 * turns, with each API message's final usage on every one of its block records (as the CLI
 * writes them, so a reader must deduplicate by message id + request id) and its `costUSD`.
 * A turn's usage (its `result`'s model_usage_since_last_result) is split over the turn's
 * API messages, so both layouts hold the same totals.
 */
import { mkdir, readdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';

type Json = Record<string, any>;

/** Converts every clia store transcript under `cliaSpace` into `home`/.claude/projects; returns the bytes written. */
export async function writeClaudeLayout(cliaSpace: string, home: string): Promise<number> {
  let bytes = 0;
  for (const agent of await readdir(cliaSpace)) {
    const dir = path.join(cliaSpace, agent, 'sessions');
    const files = (await readdir(dir).catch(() => [] as string[])).filter((f) => f.endsWith('.jsonl'));
    if (files.length === 0) continue;
    const cwd = `/home/user/space-projects/${agent}`;
    const out = path.join(home, '.claude', 'projects', cwd.replace(/[^a-zA-Z0-9]/g, '-'));
    await mkdir(out, { recursive: true });
    for (const file of files) {
      const sessionId = file.slice(0, -'.jsonl'.length);
      const lines = nativeLines((await readFile(path.join(dir, file), 'utf8')).split('\n').filter(Boolean), sessionId, cwd);
      const text = `${lines.join('\n')}\n`;
      bytes += Buffer.byteLength(text);
      await writeFile(path.join(out, file), text);
    }
  }
  return bytes;
}

function nativeLines(storeLines: string[], sessionId: string, cwd: string): string[] {
  const base = { isSidechain: false, userType: 'external', entrypoint: 'sdk-cli', cwd, sessionId, version: '2.1.330', gitBranch: 'HEAD' };
  const out: string[] = [];
  let parent: string | null = null;
  let turn: Json[] = [];
  const emit = (record: Json): void => {
    out.push(JSON.stringify({ parentUuid: parent, ...record, ...base }));
    parent = record.uuid;
  };
  for (const line of storeLines) {
    const r = JSON.parse(line) as Json;
    if (r.type === 'result') {
      finishTurn(turn, r, emit);
      turn = [];
    } else if (r.type === 'user' || r.type === 'assistant') turn.push(r);
  }
  return out;
}

/** Writes a turn's records, the turn's usage spread over its API messages. */
function finishTurn(records: Json[], result: Json, emit: (record: Json) => void): void {
  const [model, usage] = Object.entries<Json>(result.model_usage_since_last_result ?? {})[0] ?? [];
  const ids = [...new Set(records.filter((r) => r.type === 'assistant').map((r) => r.message.id as string))];
  const share = new Map(ids.map((id, i) => [id, split(usage ?? {}, i, ids.length)]));
  for (const r of records) {
    if (r.type === 'user') {
      emit({ type: 'user', message: r.message, uuid: r.uuid, timestamp: r.timestamp, ...(Array.isArray(r.message.content) ? { toolUseResult: r.tool_use_result } : { promptSource: 'sdk' }) });
      continue;
    }
    const s = share.get(r.message.id)!;
    const message = {
      ...r.message,
      model: model ?? r.message.model,
      stop_reason: r.message.content.some((b: Json) => b.type === 'tool_use') ? 'tool_use' : 'end_turn',
      usage: { input_tokens: s.inputTokens, cache_creation_input_tokens: s.cacheCreationInputTokens, cache_read_input_tokens: s.cacheReadInputTokens, output_tokens: s.outputTokens, service_tier: 'standard' },
    };
    emit({ type: 'assistant', message, requestId: `req_${r.message.id}`, uuid: r.uuid, timestamp: r.timestamp, costUSD: s.costUSD });
  }
}

/** Message `i` of `n`'s part of a turn's usage: an even share, the last taking the remainder. */
function split(usage: Json, i: number, n: number): Record<'inputTokens' | 'outputTokens' | 'cacheReadInputTokens' | 'cacheCreationInputTokens' | 'costUSD', number> {
  const part = (total: number, whole: boolean): number => {
    const each = whole ? Math.floor(total / n) : total / n;
    return i < n - 1 ? each : total - each * (n - 1);
  };
  return {
    inputTokens: part(usage.inputTokens ?? 0, true),
    outputTokens: part(usage.outputTokens ?? 0, true),
    cacheReadInputTokens: part(usage.cacheReadInputTokens ?? 0, true),
    cacheCreationInputTokens: part(usage.cacheCreationInputTokens ?? 0, true),
    costUSD: part(usage.costUSD ?? 0, false),
  };
}
