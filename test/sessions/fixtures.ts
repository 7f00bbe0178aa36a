import { randomUUID } from 'node:crypto';
import { cpSync, mkdirSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import { CliSessionStore } from '../../service/runtimes/cli-session-store.js';

/**
 * Session stores in the real on-disk formats, built from the recorded fixtures in
 * test/fixtures/sessions (copied from shared/fixtures/runtimes): OpenClaw's file store and
 * SQLite store as captured, and the service's own clia/clib stores written through the
 * shared CliSessionStore with transcripts made of recorded CLI output.
 */
export const FIXTURES = path.join(import.meta.dirname, '..', 'fixtures', 'sessions');

export const RUNTIMEA_FILE_IDS = ['06ea5b77-66f5-409a-96a6-9287e9225d4f', 'dfd55b25-94d8-43e0-bc79-0e9078ac34fd', '8f1cbda9-9773-46f9-b7ac-24e8b560164e'] as const;

export function runtimeaSessionsDir(home: string, agent = 'main'): string {
  return path.join(home, '.runtimea', 'agents', agent, 'sessions');
}

/** OpenClaw 2026.7.1's file store, verbatim (with a debug trajectory beside the logs). */
export function writeRuntimeaFileStore(home: string, agent = 'main'): string {
  const dir = runtimeaSessionsDir(home, agent);
  mkdirSync(dir, { recursive: true });
  cpSync(path.join(FIXTURES, 'runtimea-file'), dir, { recursive: true });
  return dir;
}

export function runtimeaDb(home: string, agent = 'main'): string {
  return path.join(home, '.runtimea', 'agents', agent, 'agent', 'openclaw-agent.sqlite');
}

/** OpenClaw 2026.9.6's per-agent SQLite store, rebuilt from the captured schema and rows (WAL mode, as the gateway runs it). */
export function writeRuntimeaSqlite(home: string, agent = 'main'): string {
  const file = runtimeaDb(home, agent);
  mkdirSync(path.dirname(file), { recursive: true });
  const dir = path.join(FIXTURES, 'runtimea-sqlite');
  const db = new Database(file);
  try {
    db.pragma('journal_mode = WAL');
    db.exec('CREATE TABLE session_canonical_validation_pending (session_key TEXT PRIMARY KEY); CREATE TABLE conversations (conversation_id TEXT PRIMARY KEY);');
    db.exec(readFileSync(path.join(dir, 'schema-session-tables.sql'), 'utf8'));
    const entries = JSON.parse(readFileSync(path.join(dir, 'entries.json'), 'utf8')) as Record<string, unknown>;
    const nodes = JSON.parse(readFileSync(path.join(dir, 'session_nodes.columns.json'), 'utf8')) as Array<Record<string, unknown>>;
    const insertNode = db.prepare(
      'INSERT INTO session_nodes (session_key, current_session_id, entry_json, updated_at, status, created_at, created_via, last_interaction_at, last_activity_at, label, display_name, archived_at) VALUES (@session_key, @current_session_id, @entry_json, @updated_at, @status, @created_at, @created_via, @last_interaction_at, @last_activity_at, @label, @display_name, @archived_at)',
    );
    for (const n of nodes) insertNode.run({ ...n, entry_json: JSON.stringify(entries[n.session_key as string] ?? {}) });
    const windows = JSON.parse(readFileSync(path.join(dir, 'session_windows.json'), 'utf8')) as Array<Record<string, unknown>>;
    for (const w of windows) {
      const cols = Object.keys(w);
      db.prepare(`INSERT INTO session_windows (${cols.join(', ')}) VALUES (${cols.map((c) => `@${c}`).join(', ')})`).run(w);
    }
    const insertEvent = db.prepare('INSERT INTO transcript_events (session_id, seq, event_json, created_at) VALUES (?, ?, ?, ?)');
    for (const name of readdirSync(path.join(dir, 'transcripts'))) {
      const id = name.replace(/\.jsonl$/, '');
      readFileSync(path.join(dir, 'transcripts', name), 'utf8')
        .split('\n')
        .filter(Boolean)
        .forEach((line, seq) => insertEvent.run(id, seq, line, Date.parse((JSON.parse(line) as { timestamp: string }).timestamp) || 0));
    }
  } finally {
    db.close();
  }
  return file;
}

export function fixtureLines(kind: 'clia' | 'clib', name: string): string[] {
  return readFileSync(path.join(FIXTURES, kind, `${name}.stdout.jsonl`), 'utf8').split('\n').filter(Boolean);
}

export interface Turn {
  prompt: string;
  /** A recorded stdout (file name without `.stdout.jsonl`). */
  run: string;
  at: Date;
}

/** A clia transcript as the service's store holds it: per turn the prompt line, then the CLI's stdout verbatim. */
export function cliaTranscript(sessionId: string, turns: Turn[]): string[] {
  return turns.flatMap((turn) => [
    JSON.stringify({ type: 'user', message: { role: 'user', content: turn.prompt }, session_id: sessionId, parent_tool_use_id: null, uuid: randomUUID(), timestamp: turn.at.toISOString() }),
    ...fixtureLines('clia', turn.run),
  ]);
}

/**
 * A clib transcript as the service's store holds it: per turn a `user.message` line, then
 * codex's `exec --json` events each with a `timestamp`, `turn.completed.usage` per turn
 * (codex reports the thread's running total; the store keeps the difference) with `model`.
 */
export function clibTranscript(turns: Turn[], model = 'gpt-5.5'): string[] {
  const out: string[] = [];
  const zero = { input_tokens: 0, cached_input_tokens: 0, cache_write_input_tokens: 0, output_tokens: 0, reasoning_output_tokens: 0 };
  let previous = zero;
  let thread: unknown;
  for (const turn of turns) {
    let t = turn.at.getTime();
    const stamp = () => new Date((t += 150)).toISOString();
    out.push(JSON.stringify({ type: 'user.message', text: turn.prompt, timestamp: new Date(t).toISOString() }));
    for (const line of fixtureLines('clib', turn.run)) {
      const event = JSON.parse(line) as Record<string, unknown>;
      if (event.type === 'thread.started') {
        // Recorded runs of another thread start their own running total.
        if (event.thread_id !== thread) previous = zero;
        thread = event.thread_id;
      }
      if (event.type === 'turn.completed') {
        const total = event.usage as typeof previous;
        const perTurn = Object.fromEntries(Object.entries(total).map(([k, v]) => [k, v - (previous[k as keyof typeof previous] ?? 0)]));
        previous = total;
        out.push(JSON.stringify({ type: 'turn.completed', usage: perTurn, model, timestamp: stamp() }));
      } else out.push(JSON.stringify({ ...event, timestamp: stamp() }));
    }
  }
  return out;
}

export interface CliSession {
  agentId: string;
  sessionId: string;
  title?: string;
  updatedAt: number;
  directory?: string;
  lines: string[];
}

/** Writes sessions through the shared store writer (the same code the chat runtimes use). */
export async function writeCliSessions(root: string, agentName: 'clia_code' | 'clib', sessions: CliSession[]): Promise<CliSessionStore> {
  const store = new CliSessionStore(root, agentName);
  for (const s of sessions) {
    await store.upsert(s.agentId, s.sessionId, { title: s.title ?? '', updatedAt: s.updatedAt, directory: s.directory ?? '' });
    if (s.lines.length > 0) await store.append(s.agentId, s.sessionId, s.lines);
  }
  return store;
}
