import { randomUUID } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { expect } from 'vitest';
import type { TestService } from '../helpers/service.js';
import { fixtureLines, runtimeaSessionsDir } from '../sessions/fixtures.js';

/**
 * Session logs in the real formats, timed relative to today, for the usage tests. Shapes
 * are those of the recorded fixtures (test/fixtures/sessions): OpenClaw transcript records,
 * recorded Claude Code and codex stdout (retimed so each turn happens when the test says),
 * and Claude Code's own on-disk records.
 */
export const DAY = 86_400_000;

/** Midnight UTC of today, plus `days` (negative: past) and an `HH:MM:SS.mmm` time. */
export function at(days: number, time: string): Date {
  const today = Math.floor(Date.now() / DAY) * DAY;
  return new Date(today + days * DAY + Date.parse(`1970-01-01T${time}Z`));
}

/** YYYY-MM-DD of today + `days`. */
export function dateAt(days: number): string {
  return at(days, '00:00:00.000').toISOString().slice(0, 10);
}

/** GET /api/usage`query`, which must answer 200. */
export async function usageOf(svc: TestService, query = ''): Promise<any> {
  const res = await svc.get(`/api/usage${query}`);
  expect(res.status, res.text).toBe(200);
  return res.json();
}

/** The longest awayFromMidnight waits: a hook or test that calls it takes this much more time. */
export const MIDNIGHT_WAIT_MS = 60_000;

/**
 * Waits past midnight UTC when it is under a minute away, so "today" holds for a test. The
 * caller's timeout must allow for it (`MIDNIGHT_WAIT_MS + 30_000`): a run that reached this
 * file in the minute before midnight failed its 30 s hook.
 */
export async function awayFromMidnight(): Promise<void> {
  const left = DAY - (Date.now() % DAY);
  if (left < MIDNIGHT_WAIT_MS) await new Promise((resolve) => setTimeout(resolve, left + 100));
}

export interface RuntimeaCall {
  /** When the call's record was written (the end of the call). */
  at: Date;
  model: string;
  usage: { input: number; output: number; cacheRead: number; cacheWrite: number };
  /** The log's own cost (`usage.cost.total`); omitted: no cost object at all. */
  cost?: number;
  /** Tool calls made by this call (then it has no text). */
  tools?: string[];
  text?: string;
}

export interface RuntimeaTurn {
  prompt: string;
  /** When the user sent it (`message.timestamp`); the record is written with the turn's end. */
  sent: Date;
  calls: RuntimeaCall[];
}

/** An OpenClaw 2026.7.1 transcript: header, model change, then per turn the user record, each call's assistant record, and a result for each tool call. */
export function runtimeaTranscript(sessionId: string, turns: RuntimeaTurn[]): string[] {
  let n = 0;
  let parent: string | null = null;
  const rec = (timestamp: Date, body: Record<string, unknown>): string => {
    const id = `${(n++).toString(16).padStart(8, '0')}`;
    const line = JSON.stringify({ type: body.type ?? 'message', id, parentId: parent, timestamp: timestamp.toISOString(), ...body });
    parent = id;
    return line;
  };
  const first = turns[0]?.sent ?? new Date();
  const out = [
    JSON.stringify({ type: 'session', version: 3, id: sessionId, timestamp: first.toISOString(), cwd: '/home/user/.runtimea/workspace' }),
    rec(first, { type: 'model_change', provider: 'fake', modelId: 'fake-model' }),
  ];
  for (const turn of turns) {
    const end = turn.calls[turn.calls.length - 1]?.at ?? turn.sent;
    out.push(rec(end, { type: 'message', message: { role: 'user', content: turn.prompt, timestamp: turn.sent.getTime() } }));
    let started = turn.sent.getTime();
    for (const call of turn.calls) {
      const tools = call.tools ?? [];
      const content = tools.length > 0 ? tools.map((name, i) => ({ type: 'toolCall', id: `call_${n}_${i}`, name, arguments: { command: 'ls' } })) : [{ type: 'text', text: call.text ?? 'done' }];
      const usage = { ...call.usage, totalTokens: call.usage.input + call.usage.output + call.usage.cacheRead + call.usage.cacheWrite, ...(call.cost !== undefined ? { cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: call.cost } } : {}) };
      const provider = call.model.startsWith('claude') ? 'anthropic' : 'openai';
      out.push(rec(call.at, { type: 'message', message: { role: 'assistant', content, api: provider === 'anthropic' ? 'anthropic-messages' : 'openai-completions', provider, model: call.model, usage, stopReason: tools.length > 0 ? 'toolUse' : 'stop', timestamp: started, responseId: `resp-${n}` } }));
      tools.forEach((name, i) => {
        out.push(rec(new Date(call.at.getTime() + 100), { type: 'message', message: { role: 'toolResult', toolCallId: `call_${n - 1}_${i}`, toolName: name, content: [{ type: 'text', text: 'file-a\nfile-b' }], isError: false, timestamp: call.at.getTime() + 100 } }));
      });
      started = call.at.getTime();
      out.push(rec(call.at, { type: 'custom', customType: 'openclaw:bootstrap-context:full', data: { timestamp: call.at.getTime(), sessionId } }));
    }
  }
  return out;
}

/** Writes an OpenClaw file store: sessions.json keyed by session key, and each transcript. */
export function writeRuntimeaStore(home: string, sessions: Array<{ id: string; updatedAt: number; lines: string[] }>, agent = 'main'): string {
  const dir = runtimeaSessionsDir(home, agent);
  mkdirSync(dir, { recursive: true });
  const index: Record<string, unknown> = {};
  sessions.forEach((s, i) => {
    const file = path.join(dir, `${s.id}.jsonl`);
    writeFileSync(file, `${s.lines.join('\n')}\n`);
    index[`agent:${agent}:s${i}`] = { sessionId: s.id, updatedAt: s.updatedAt, sessionFile: file, status: 'done' };
  });
  writeFileSync(path.join(dir, 'sessions.json'), JSON.stringify(index, null, 2));
  return dir;
}

/** Shifts every `timestamp` of recorded lines so the first one is `first`. */
function retime(lines: string[], first: Date): string[] {
  const records = lines.map((l) => JSON.parse(l) as Record<string, unknown>);
  const t0 = records.map((r) => (typeof r.timestamp === 'string' ? Date.parse(r.timestamp) : NaN)).find((t) => Number.isFinite(t));
  if (t0 === undefined) return lines;
  const shift = first.getTime() - t0;
  return records.map((r) => JSON.stringify(typeof r.timestamp === 'string' ? { ...r, timestamp: new Date(Date.parse(r.timestamp) + shift).toISOString() } : r));
}

/** One clia turn as the service's store holds it: the prompt line, then a recorded stdout whose first timed line comes `firstAfterMs` later. */
export function cliaTurn(sessionId: string, prompt: string, sent: Date, run: string, firstAfterMs: number): string[] {
  return [
    JSON.stringify({ type: 'user', message: { role: 'user', content: prompt }, session_id: sessionId, parent_tool_use_id: null, uuid: randomUUID(), timestamp: sent.toISOString() }),
    ...retime(fixtureLines('clia', run), new Date(sent.getTime() + firstAfterMs)),
  ];
}

/** One clib turn as the service's store holds it: user.message, the recorded events 150 ms apart, turn.completed with this turn's usage and the model. */
export function clibTurn(prompt: string, sent: Date, run: string, model: string): string[] {
  let t = sent.getTime();
  const out = [JSON.stringify({ type: 'user.message', text: prompt, timestamp: sent.toISOString() })];
  for (const line of fixtureLines('clib', run)) {
    const event = JSON.parse(line) as Record<string, unknown>;
    t += 150;
    out.push(JSON.stringify({ ...event, ...(event.type === 'turn.completed' ? { model } : {}), timestamp: new Date(t).toISOString() }));
  }
  return out;
}

export interface NativeMessage {
  id: string;
  requestId: string;
  model: string;
  usage: { input_tokens: number; output_tokens: number; cache_read_input_tokens: number; cache_creation_input_tokens: number };
  /** One record per block, as Claude Code writes them: each repeats the message's usage. */
  blocks: Array<{ at: Date; text?: string; tool?: string }>;
}

/** Claude Code's own on-disk records (`~/.claude/projects/<key>/<id>.jsonl` lines): a prompt, then assistant records and tool results. */
export function nativeRecords(sessionId: string, prompt: string, sent: Date, messages: NativeMessage[]): Array<Record<string, unknown>> {
  const base = { isSidechain: false, userType: 'external', entrypoint: 'sdk-cli', cwd: '/home/user/space-projects/p', sessionId, version: '2.1.330', gitBranch: 'HEAD' };
  let parent: string | null = null;
  const out: Array<Record<string, unknown>> = [];
  const push = (record: Record<string, unknown>): void => {
    const uuid = randomUUID();
    out.push({ parentUuid: parent, ...record, uuid, ...base });
    parent = uuid;
  };
  push({ type: 'user', message: { role: 'user', content: prompt }, timestamp: sent.toISOString(), promptSource: 'sdk' });
  for (const m of messages) {
    for (const block of m.blocks) {
      const content = block.tool ? [{ type: 'tool_use', id: `toolu_${m.id}`, name: block.tool, input: {} }] : [{ type: 'text', text: block.text ?? '' }];
      push({ type: 'assistant', message: { id: m.id, type: 'message', role: 'assistant', model: m.model, content, stop_reason: block.tool ? 'tool_use' : 'end_turn', stop_sequence: null, usage: { ...m.usage, service_tier: 'standard' } }, requestId: m.requestId, timestamp: block.at.toISOString() });
      if (block.tool) push({ type: 'user', message: { role: 'user', content: [{ tool_use_id: `toolu_${m.id}`, type: 'tool_result', content: 'ok', is_error: false }] }, timestamp: new Date(block.at.getTime() + 200).toISOString(), toolUseResult: { stdout: 'ok' } });
    }
  }
  return out;
}
