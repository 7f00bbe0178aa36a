/**
 * A synthetic corpus of sessions in the real on-disk formats (shapes from the recorded
 * fixtures in shared/fixtures/runtimes), for the sessions, usage and full-text benchmarks
 * and for tests that need volume: OpenClaw's file store (sessions.json keyed by session key
 * + <sessionId>.jsonl), the service's clia store (prompt line + stream-json stdout) and clib
 * store (user.message + exec --json events with timestamps and per-turn usage).
 * Deterministic: the same seed gives the same bytes.
 */
import { once } from 'node:events';
import { createWriteStream } from 'node:fs';
import { mkdir, utimes, writeFile } from 'node:fs/promises';
import path from 'node:path';

export type CorpusRuntime = 'runtimea' | 'clia' | 'clib';

/** Small deterministic PRNG (mulberry32). */
export function random(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const WORDS = 'the a parser session index page token model tool file project write read test build deploy fix bug cache merge search title agent runtime shell output error config plan week report user data log'.split(' ');

export function sentence(rand: () => number, words: number): string {
  return Array.from({ length: words }, () => WORDS[Math.floor(rand() * WORDS.length)]).join(' ');
}

export function uuid(rand: () => number): string {
  const hex = Array.from({ length: 32 }, () => Math.floor(rand() * 16).toString(16)).join('');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-4${hex.slice(13, 16)}-a${hex.slice(17, 20)}-${hex.slice(20, 32)}`;
}

export interface TurnShape {
  prompt: string;
  reply: string;
  /** A tool call and its result in this turn. */
  tool?: { name: string; input: Record<string, unknown>; output: string };
}

/** Turns of a conversation; about one in four uses a tool. */
export function turns(rand: () => number, count: number, replyWords = 40): TurnShape[] {
  return Array.from({ length: count }, () => ({
    prompt: sentence(rand, 4 + Math.floor(rand() * 12)),
    reply: sentence(rand, replyWords),
    ...(rand() < 0.25 ? { tool: { name: 'exec', input: { command: `ls ${sentence(rand, 1)}` }, output: sentence(rand, 20) } } : {}),
  }));
}

/** OpenClaw transcript records (2026.7.1 file store / 2026.9.6 event_json). */
export function runtimeaLines(sessionId: string, shapes: TurnShape[], start: number, rand: () => number): string[] {
  let t = start;
  let n = 0;
  let parent: string | null = null;
  const rec = (body: Record<string, unknown>): string => {
    const id = `${sessionId.slice(0, 8)}${(n++).toString(16).padStart(6, '0')}`;
    const line = JSON.stringify({ ...body, id, parentId: parent, timestamp: new Date(t).toISOString() });
    parent = id;
    return line;
  };
  const usage = (input: number, output: number) => ({ input, output, cacheRead: Math.floor(input / 2), cacheWrite: 0, totalTokens: input + output + Math.floor(input / 2), cost: { input: input * 3e-6, output: output * 15e-6, cacheRead: input * 1.5e-7, cacheWrite: 0, total: input * 3e-6 + output * 15e-6 + input * 1.5e-7 } });
  const out = [
    JSON.stringify({ type: 'session', version: 3, id: sessionId, timestamp: new Date(t).toISOString(), cwd: '/home/user/.runtimea/workspace' }),
    rec({ type: 'model_change', provider: 'fake', modelId: 'fake-model' }),
  ];
  for (const turn of shapes) {
    t += 60_000 + Math.floor(rand() * 600_000);
    out.push(rec({ type: 'message', message: { role: 'user', content: turn.prompt, timestamp: t } }));
    const asked = t;
    if (turn.tool) {
      t += 800;
      out.push(rec({ type: 'message', message: { role: 'assistant', content: [{ type: 'toolCall', id: `call_${n}`, name: turn.tool.name, arguments: turn.tool.input }], api: 'openai-completions', provider: 'fake', model: 'fake-model', usage: usage(15000, 12), stopReason: 'toolUse', timestamp: asked, responseId: `chatcmpl-${n}` } }));
      t += 120;
      out.push(rec({ type: 'message', message: { role: 'toolResult', toolCallId: `call_${n - 1}`, toolName: turn.tool.name, content: [{ type: 'text', text: turn.tool.output }], isError: false, timestamp: t } }));
    }
    t += 1500;
    out.push(rec({ type: 'message', message: { role: 'assistant', content: [{ type: 'text', text: turn.reply }], api: 'openai-completions', provider: 'fake', model: 'fake-model', usage: usage(15300, Math.ceil(turn.reply.length / 4)), stopReason: 'stop', timestamp: asked, responseId: `chatcmpl-${n}` } }));
    out.push(rec({ type: 'custom', customType: 'openclaw:bootstrap-context:full', data: { timestamp: t, sessionId } }));
  }
  return out;
}

/** The service's clia transcript: per turn the prompt line, then stream-json stdout (no partials). */
export function cliaLines(sessionId: string, shapes: TurnShape[], start: number, rand: () => number): string[] {
  let t = start;
  const out: string[] = [];
  const base = { session_id: sessionId, parent_tool_use_id: null };
  const running = { inputTokens: 0, outputTokens: 0, cacheReadInputTokens: 0, cacheCreationInputTokens: 0, costUSD: 0 };
  for (const turn of shapes) {
    t += 60_000 + Math.floor(rand() * 600_000);
    const began = t;
    out.push(JSON.stringify({ type: 'user', message: { role: 'user', content: turn.prompt }, ...base, uuid: uuid(rand), timestamp: new Date(t).toISOString() }));
    out.push(JSON.stringify({ type: 'system', subtype: 'init', cwd: '/home/user/space-projects/p', session_id: sessionId, tools: ['Bash', 'Read', 'Write'], model: 'claude-opus-5-5', uuid: uuid(rand) }));
    const msg = (content: unknown[]) => ({ id: `msg_${uuid(rand).slice(0, 12)}`, type: 'message', role: 'assistant', model: 'claude-opus-5-5', content, stop_reason: null, usage: { input_tokens: 4, cache_creation_input_tokens: 40, cache_read_input_tokens: 12000, output_tokens: 1 } });
    if (turn.tool) {
      const id = `toolu_${uuid(rand).slice(0, 12)}`;
      t += 700;
      out.push(JSON.stringify({ type: 'assistant', message: msg([{ type: 'tool_use', id, name: 'Bash', input: turn.tool.input }]), ...base, uuid: uuid(rand), timestamp: new Date(t).toISOString() }));
      t += 200;
      out.push(JSON.stringify({ type: 'user', message: { role: 'user', content: [{ tool_use_id: id, type: 'tool_result', content: turn.tool.output, is_error: false }] }, ...base, uuid: uuid(rand), timestamp: new Date(t).toISOString(), tool_use_result: { stdout: turn.tool.output, stderr: '' } }));
    }
    t += 1200;
    out.push(JSON.stringify({ type: 'assistant', message: msg([{ type: 'text', text: turn.reply }]), ...base, uuid: uuid(rand), timestamp: new Date(t).toISOString() }));
    const cost = 0.003 + rand() * 0.01;
    // As the CLI writes it: this turn's usage, per model since the last result, and the
    // conversation's running totals (modelUsage, total_cost_usd) that a reader must not sum.
    const turnUsage = { inputTokens: 10, outputTokens: Math.ceil(turn.reply.length / 4), cacheReadInputTokens: 24000, cacheCreationInputTokens: 40, costUSD: cost };
    for (const key of ['inputTokens', 'outputTokens', 'cacheReadInputTokens', 'cacheCreationInputTokens', 'costUSD'] as const) running[key] += turnUsage[key];
    out.push(JSON.stringify({ type: 'result', subtype: 'success', is_error: false, result: turn.reply, duration_ms: t - began, num_turns: turn.tool ? 2 : 1, session_id: sessionId, total_cost_usd: running.costUSD, usage: { input_tokens: 10, cache_creation_input_tokens: 40, cache_read_input_tokens: 24000, output_tokens: turnUsage.outputTokens }, modelUsage: { 'claude-opus-5-5': { ...running } }, model_usage_since_last_result: { 'claude-opus-5-5': turnUsage }, uuid: uuid(rand) }));
  }
  return out;
}

/** The service's clib transcript: user.message, then exec --json events with timestamps, usage per turn. */
export function clibLines(shapes: TurnShape[], start: number, rand: () => number): string[] {
  let t = start;
  const out: string[] = [];
  const at = () => new Date(t).toISOString();
  for (const turn of shapes) {
    t += 60_000 + Math.floor(rand() * 600_000);
    out.push(JSON.stringify({ type: 'user.message', text: turn.prompt, timestamp: at() }));
    out.push(JSON.stringify({ type: 'thread.started', thread_id: '01a1fea5-8c7b-7943-a9b1-1514d8f61ca9', timestamp: at() }));
    out.push(JSON.stringify({ type: 'turn.started', timestamp: at() }));
    let item = 0;
    t += 400;
    out.push(JSON.stringify({ type: 'item.completed', item: { id: `item_${item++}`, type: 'reasoning', text: '**Answering**\n\nShort.' }, timestamp: at() }));
    if (turn.tool) {
      const command = `/bin/bash -lc '${String(turn.tool.input.command)}'`;
      out.push(JSON.stringify({ type: 'item.started', item: { id: `item_${item}`, type: 'command_execution', command, aggregated_output: '', exit_code: null, status: 'in_progress' }, timestamp: at() }));
      t += 300;
      out.push(JSON.stringify({ type: 'item.completed', item: { id: `item_${item++}`, type: 'command_execution', command, aggregated_output: turn.tool.output, exit_code: 0, status: 'completed' }, timestamp: at() }));
    }
    t += 900;
    out.push(JSON.stringify({ type: 'item.completed', item: { id: `item_${item++}`, type: 'agent_message', text: turn.reply }, timestamp: at() }));
    out.push(JSON.stringify({ type: 'turn.completed', usage: { input_tokens: 13481, cached_input_tokens: 5696, cache_write_input_tokens: 0, output_tokens: Math.ceil(turn.reply.length / 4), reasoning_output_tokens: 16 }, model: 'gpt-5.5', timestamp: at() }));
  }
  return out;
}

export interface CorpusSession {
  id: string;
  runtime: CorpusRuntime;
  agentId: string;
  title: string;
  updatedAt: number;
  /** The first prompt (the title of runtimea sessions, whose index has none). */
  firstPrompt: string;
}

export interface CorpusOptions {
  sessions: number;
  /** Turns per session: 1..maxTurns. */
  maxTurns?: number;
  /** Sessions per agent folder. */
  perAgent?: number;
  seed?: number;
  /** Newest session time; the rest are spread over the year before. */
  now?: number;
  /**
   * Give each log the mtime a real history would have, that of its last write, rather than
   * the time of generation: its session's updatedAt plus 12 hours (after its last record:
   * at most 60 turns of at most 11 minutes, from an hour before updatedAt), never later
   * than now.
   */
  datedFiles?: boolean;
}

/**
 * Writes `sessions` sessions into `home`, split evenly over runtimea (file store), clia and
 * clib, with their index files. Returns what was written, newest first.
 */
export async function writeCorpus(home: string, options: CorpusOptions): Promise<CorpusSession[]> {
  const rand = random(options.seed ?? 1);
  const perAgent = options.perAgent ?? 250;
  const maxTurns = options.maxTurns ?? 6;
  const now = options.now ?? Date.parse('2026-11-23T12:00:00Z');
  const made: CorpusSession[] = [];
  const folders = new Map<string, { runtime: CorpusRuntime; index: Record<string, unknown>; agentId: string }>();
  for (let i = 0; i < options.sessions; i++) {
    const runtime: CorpusRuntime = (['runtimea', 'clia', 'clib'] as const)[i % 3]!;
    const agentId = `${runtime === 'runtimea' ? 'agent' : 'project'}-${Math.floor(i / 3 / perAgent)}`;
    const id = uuid(rand);
    const shapes = turns(rand, 1 + Math.floor(rand() * maxTurns));
    const updatedAt = now - Math.floor(rand() * 365 * 86_400_000);
    const start = updatedAt - 3_600_000;
    const dir = runtime === 'runtimea' ? path.join(home, '.runtimea', 'agents', agentId, 'sessions') : path.join(home, `${runtime}-space`, agentId, 'sessions');
    let folder = folders.get(dir);
    if (!folder) {
      folder = { runtime, index: {}, agentId };
      folders.set(dir, folder);
      await mkdir(dir, { recursive: true });
    }
    const lines = runtime === 'runtimea' ? runtimeaLines(id, shapes, start, rand) : runtime === 'clia' ? cliaLines(id, shapes, start, rand) : clibLines(shapes, start, rand);
    await writeFile(path.join(dir, `${id}.jsonl`), `${lines.join('\n')}\n`);
    if (options.datedFiles) {
      const written = new Date(Math.min(Date.now(), updatedAt + 12 * 3_600_000));
      await utimes(path.join(dir, `${id}.jsonl`), written, written);
    }
    const title = runtime === 'runtimea' ? '' : `${runtime} ${sentence(rand, 5)}`;
    if (runtime === 'runtimea') folder.index[`agent:${agentId}:s${i}`] = { sessionId: id, updatedAt, sessionFile: path.join(dir, `${id}.jsonl`), status: 'done', model: 'fake-model' };
    else folder.index[id] = { sessionId: id, title, updatedAt, directory: `/home/user/space-projects/${agentId}`, directoryHistory: [] };
    made.push({ id, runtime, agentId, title, updatedAt, firstPrompt: shapes[0]!.prompt });
  }
  for (const [dir, folder] of folders) await writeFile(path.join(dir, 'sessions.json'), JSON.stringify(folder.index, null, 2));
  return made.sort((a, b) => b.updatedAt - a.updatedAt || (a.id < b.id ? -1 : 1));
}

/**
 * Streams a log of about `bytes` bytes in `runtime`'s format to `file` (memory stays flat).
 * Returns the number of turns written.
 */
export async function writeBigLog(file: string, runtime: CorpusRuntime, bytes: number, seed = 7): Promise<number> {
  const rand = random(seed);
  const out = createWriteStream(file);
  let written = 0;
  let count = 0;
  let t = Date.parse('2025-01-01T00:00:00Z');
  const id = uuid(rand);
  while (written < bytes) {
    const shapes = turns(rand, 50, 60);
    // A fresh id per chunk keeps record ids unique (they are prefixed with it).
    const lines = runtime === 'runtimea' ? runtimeaLines(count === 0 ? id : uuid(rand), shapes, t, rand).slice(count === 0 ? 0 : 2) : runtime === 'clia' ? cliaLines(id, shapes, t, rand) : clibLines(shapes, t, rand);
    t += 50 * 700_000;
    count += shapes.length;
    const chunk = `${lines.join('\n')}\n`;
    written += Buffer.byteLength(chunk);
    if (!out.write(chunk)) await once(out, 'drain');
  }
  out.end();
  await once(out, 'finish');
  return count;
}
