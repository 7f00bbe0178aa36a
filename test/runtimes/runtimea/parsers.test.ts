import { execFileSync } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import Database from 'better-sqlite3';
import { describe, expect, it, onTestFinished } from 'vitest';
import { parseChatData, refusalMessage, SseDataSplitter, type ChatPiece } from '../../../service/runtimes/runtimea/chat-sse.js';
import { agentOf } from '../../../service/runtimes/runtimea/runtime.js';
import { GatewaySessionStore } from '../../../service/runtimes/runtimea/session-store.js';
import { runDetails, userRecordId } from '../../../service/transcripts/runtimea.js';

const FIXTURES = path.join(import.meta.dirname, '..', '..', 'fixtures', 'runtimea');
// The store captures are shared with the sessions tests.
const STORES = path.join(import.meta.dirname, '..', '..', 'fixtures', 'sessions');

function pieces(file: string, chunkSize = 37): ChatPiece[] {
  const raw = readFileSync(file, 'utf8');
  const splitter = new SseDataSplitter();
  const out: ChatPiece[] = [];
  // Fed in odd-sized pieces: frames split anywhere must still parse.
  for (let i = 0; i < raw.length; i += chunkSize) for (const data of splitter.push(raw.slice(i, i + chunkSize))) out.push(...parseChatData(data));
  return out;
}

const text = (ps: ChatPiece[]) => ps.map((p) => (p.kind === 'text' ? p.text : '')).join('');

describe('gateway chat stream (every recorded .sse)', () => {
  const streams = ['2026.9.6', '2026.7.1'].flatMap((v) =>
    readdirSync(path.join(FIXTURES, v, 'http'))
      .filter((f) => f.endsWith('.sse'))
      .map((f) => path.join(FIXTURES, v, 'http', f)),
  );

  it('every SSE capture (not the JSON answers) ends with [DONE], each piece well-formed', () => {
    const sse = streams.filter((f) => readFileSync(f, 'utf8').startsWith('data:'));
    expect(sse.length).toBeGreaterThanOrEqual(20);
    for (const file of sse) {
      const ps = pieces(file);
      expect(ps.at(-1), file).toEqual({ kind: 'done' });
      expect(ps.every((p) => ['run', 'text', 'finish', 'usage', 'error', 'done'].includes(p.kind)), file).toBe(true);
    }
  });

  it('a text turn: run id, the text, stop, usage of the run', () => {
    const ps = pieces(path.join(FIXTURES, '2026.9.6', 'http', 'turn1-stream.sse'));
    expect(ps[0]).toEqual({ kind: 'run', id: 'chatcmpl_0603a66c-f4b1-4751-a293-dbcc1f955b69' });
    expect(text(ps)).toBe('Fake reply #1: you said "hello there"');
    expect(ps.filter((p) => p.kind === 'finish')).toEqual([{ kind: 'finish', reason: 'stop' }]);
    // prompt_tokens 22938 = input + cached 7646; total = prompt + completion
    expect(ps.find((p) => p.kind === 'usage')).toEqual({ kind: 'usage', usage: { input: 15292, output: 9, cacheRead: 7646, cacheWrite: 0 } });
  });

  it('usage on an Anthropic route keeps cacheWrite (in total, not in prompt)', () => {
    for (const file of readdirSync(path.join(FIXTURES, '2026.9.6', 'http')).filter((f) => f.startsWith('multi-agent-turn1') && f.endsWith('.sse'))) {
      const usage = pieces(path.join(FIXTURES, '2026.9.6', 'http', file)).find((p) => p.kind === 'usage');
      const raw = JSON.parse(readFileSync(path.join(FIXTURES, '2026.9.6', 'http', file), 'utf8').split('\n').filter((l) => l.includes('"usage"'))[0]!.slice(6)).usage;
      expect(usage).toEqual({ kind: 'usage', usage: { input: raw.prompt_tokens - raw.prompt_tokens_details.cached_tokens, output: raw.completion_tokens, cacheRead: raw.prompt_tokens_details.cached_tokens, cacheWrite: raw.total_tokens - raw.prompt_tokens - raw.completion_tokens } });
      expect((usage as { usage: { cacheWrite: number } }).usage.cacheWrite).toBeGreaterThan(0);
    }
  });

  it('agent-internal tool calls are not in the stream: only the final text', () => {
    expect(text(pieces(path.join(FIXTURES, '2026.9.6', 'http', 'turn3-stream-toolcall.sse')))).toBe('Tool ls returned: ".git/" "AGENTS.md" "BOOTSTRAP.md" "IDENTITY.md" "SOUL.md" "USER.md"');
  });

  it('a provider failure mid-stream is an error piece before [DONE]', () => {
    const ps = pieces(path.join(FIXTURES, '2026.9.6', 'http', 'error-in-stream.sse'));
    expect(ps.slice(-2)).toEqual([{ kind: 'error', message: 'upstream provider error' }, { kind: 'done' }]);
  });

  it('a disconnected client got only the role chunk (no [DONE])', () => {
    const ps = pieces(path.join(FIXTURES, '2026.9.6', 'disconnect', 'turn-disconnect.sse'));
    expect(ps.map((p) => p.kind)).toEqual(['run']);
  });

  it('refusals (401, bad model) read as one sentence', () => {
    const http = (n: string) => readFileSync(path.join(FIXTURES, '2026.9.6', 'http', `${n}.sse`), 'utf8');
    expect(refusalMessage(401, http('turn10-noauth'))).toBe("The runtimea gateway refused the service's token (401): Unauthorized");
    expect(refusalMessage(400, http('turn9-bad-model-main'))).toBe('The runtimea gateway refused the turn (400): Invalid `model`. Use `openclaw` or `openclaw/<agentId>`.');
    expect(refusalMessage(502, 'Bad Gateway')).toBe('The runtimea gateway refused the turn (502): Bad Gateway');
  });
});

describe('model -> OpenClaw agent', () => {
  it('default main; agent ids and openclaw/ targets pick the agent; provider/model refs override the LLM', () => {
    expect(agentOf(undefined)).toEqual({ agent: 'main' });
    expect(agentOf('main')).toEqual({ agent: 'main' });
    expect(agentOf('work')).toEqual({ agent: 'work' });
    expect(agentOf('openclaw/work')).toEqual({ agent: 'work' });
    expect(agentOf('openclaw:work')).toEqual({ agent: 'work' });
    expect(agentOf('anthropic/claude-sonnet-5-5')).toEqual({ agent: 'main', modelOverride: 'anthropic/claude-sonnet-5-5' });
    expect(() => agentOf('bad agent!')).toThrow(/OpenClaw agent id/);
  });
});

/** The navigation a compressed row carries (the schema wants one beside event_zstd). */
const NAVIGATION = JSON.stringify({ version: 1, report: { kind: 'leaf' }, navigation: {}, reset: {}, model: {}, modelBytes: 0, modelWithoutCheckpointBytes: 0, withoutCustomDataBytes: 0 });

describe('gateway session stores (read-only)', () => {
  it('file store (openclaw 2026.7.1): rows by key and by session id, transcript by id', async () => {
    const state = mkdtempSync(path.join(os.tmpdir(), 'oc-file-'));
    onTestFinished(() => rmSync(state, { recursive: true, force: true }));
    cpSync(path.join(STORES, 'runtimea-file'), path.join(state, 'agents', 'main', 'sessions'), { recursive: true });
    const store = new GatewaySessionStore(state);
    expect(store.layout('main')).toBe('file');
    const index = JSON.parse(readFileSync(path.join(STORES, 'runtimea-file', 'sessions.json'), 'utf8'));
    const [key, entry] = Object.entries(index)[0] as [string, { sessionId: string }];
    expect(await store.byKey('main', key)).toMatchObject({ agent: 'main', sessionKey: key, sessionId: entry.sessionId });
    expect(await store.bySessionId(entry.sessionId)).toMatchObject({ agent: 'main', sessionKey: key });
    expect(await store.bySessionId('no-such-id')).toBeUndefined();
    const jsonl = await store.transcript('main', entry.sessionId);
    expect(jsonl?.split('\n')[0]).toMatch(/"type":"session"/);
    expect(runDetails(jsonl!)).toMatchObject({ answered: true, model: 'fake-model', costUsd: expect.any(Number) });
  });

  it('SQLite store (openclaw 2026.9.6, its real schema): rows and transcripts, compressed rows decompressed; a damaged one is skipped', async () => {
    const state = mkdtempSync(path.join(os.tmpdir(), 'oc-sqlite-'));
    onTestFinished(() => rmSync(state, { recursive: true, force: true }));
    const dbFile = path.join(state, 'agents', 'main', 'agent', 'openclaw-agent.sqlite');
    mkdirSync(path.dirname(dbFile), { recursive: true });
    mkdirSync(path.join(state, 'agents', 'main', 'sessions'), { recursive: true }); // exists, stays empty
    const db = new Database(dbFile);
    db.exec('CREATE TABLE session_canonical_validation_pending (session_key TEXT PRIMARY KEY); CREATE TABLE conversations (conversation_id TEXT PRIMARY KEY);');
    db.exec(readFileSync(path.join(STORES, 'runtimea-sqlite', 'schema-session-tables.sql'), 'utf8'));
    const index = JSON.parse(readFileSync(path.join(STORES, 'runtimea-sqlite', 'entries.json'), 'utf8')) as Record<string, { sessionId: string; updatedAt: number }>;
    for (const [key, entry] of Object.entries(index)) {
      db.prepare('INSERT INTO session_nodes (session_key, current_session_id, entry_json, updated_at) VALUES (?, ?, ?, ?)').run(key, entry.sessionId, JSON.stringify(entry), entry.updatedAt);
      db.prepare('INSERT INTO session_windows (session_id, session_key, created_at, updated_at) VALUES (?, ?, ?, ?)').run(entry.sessionId, key, entry.updatedAt, entry.updatedAt);
      const file = path.join(STORES, 'runtimea-sqlite', 'transcripts', `${entry.sessionId}.jsonl`);
      let lines: string[] = [];
      try {
        lines = readFileSync(file, 'utf8').split('\n').filter(Boolean);
      } catch {
        continue;
      }
      lines.forEach((l, i) => db.prepare('INSERT INTO transcript_events (session_id, seq, event_json, created_at) VALUES (?, ?, ?, ?)').run(entry.sessionId, i + 1, l, Date.now()));
      // The gateway compresses cold rows: the second record of each is one (zstd CLI).
      if (lines.length > 1) db.prepare('UPDATE transcript_events SET event_json = NULL, event_zstd = ?, event_utf8_bytes = ?, navigation_json = ? WHERE session_id = ? AND seq = 2').run(execFileSync('zstd', ['-q', '-c'], { input: lines[1] }), Buffer.byteLength(lines[1]!), NAVIGATION, entry.sessionId);
    }
    const desk = index['agent:main:desk-session-1']!;
    db.prepare('INSERT INTO transcript_events (session_id, seq, event_json, created_at, event_zstd, event_utf8_bytes, navigation_json) VALUES (?, ?, NULL, ?, ?, ?, ?)').run(desk.sessionId, 99, Date.now(), Buffer.from([1]), 1, NAVIGATION);
    db.close();

    const store = new GatewaySessionStore(state);
    expect(store.layout('main')).toBe('sqlite');
    expect((await store.rows('main')).length).toBe(Object.keys(index).length);
    expect(await store.byKey('main', 'agent:main:desk-session-1')).toMatchObject({ sessionId: desk.sessionId });
    expect(await store.bySessionId(desk.sessionId)).toMatchObject({ agent: 'main', sessionKey: 'agent:main:desk-session-1' });
    const jsonl = await store.transcript('main', desk.sessionId);
    const expected = readFileSync(path.join(STORES, 'runtimea-sqlite', 'transcripts', `${desk.sessionId}.jsonl`), 'utf8');
    expect(jsonl).toBe(expected.endsWith('\n') ? expected : `${expected}\n`);
    const runId = JSON.parse(expected.split('\n').find((l) => l.includes('"role":"assistant"'))!).message.__openclaw.runId;
    expect(runDetails(jsonl!, runId)).toEqual({ answered: true, model: 'fake-model', costUsd: expect.closeTo(0.0484254, 6) });
    expect(await store.rows('../etc')).toEqual([]);
  });

  it('the user record of a prompt sent at a time with a text (recorded transcripts of 2026.7.1 and 2026.9.6)', () => {
    const dirs = [path.join(STORES, 'runtimea-file'), path.join(STORES, 'runtimea-sqlite', 'transcripts')];
    const transcripts = dirs.flatMap((d) => readdirSync(d).filter((f) => f.endsWith('.jsonl')).map((f) => readFileSync(path.join(d, f), 'utf8')));
    let checked = 0;
    for (const jsonl of transcripts) {
      const users = jsonl.split('\n').filter((l) => l.includes('"role":"user"')).map((l) => JSON.parse(l));
      for (const [i, r] of users.entries()) {
        if (typeof r.message.content !== 'string') continue;
        expect(userRecordId(jsonl, r.message.timestamp, r.message.content)).toBe(r.id);
        // Sent earlier: still this record, unless an earlier one has the same text.
        if (!users.slice(0, i).some((u) => u.message.content === r.message.content)) expect(userRecordId(jsonl, 0, r.message.content)).toBe(r.id);
        // Sent after it, or another text: not this record.
        expect(userRecordId(jsonl, r.message.timestamp + 1, r.message.content)).not.toBe(r.id);
        expect(userRecordId(jsonl, r.message.timestamp, `${r.message.content} (another)`)).toBeUndefined();
        checked++;
      }
    }
    expect(checked).toBeGreaterThanOrEqual(3);
    // The gateway's form with an image: text blocks and an image block (as the real 2026.9.6 wrote it).
    const withImage = `${JSON.stringify({ type: 'message', id: 'u1', message: { role: 'user', content: [{ type: 'text', text: 'what is this' }, { type: 'image', data: 'AAAA', mimeType: 'image/png' }], timestamp: 1000 } })}\n`;
    expect(userRecordId(withImage, 1000, 'what is this')).toBe('u1');
  });

  it('no store yet: nothing, and nothing created', async () => {
    const state = mkdtempSync(path.join(os.tmpdir(), 'oc-none-'));
    onTestFinished(() => rmSync(state, { recursive: true, force: true }));
    const store = new GatewaySessionStore(state);
    expect(store.layout('main')).toBe('none');
    expect(await store.byKey('main', 'agent:main:x')).toBeUndefined();
    expect(readdirSync(state)).toEqual([]);
  });
});
