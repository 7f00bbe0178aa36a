// A double of the OpenClaw gateway (openclaw 2026.9.6, and the 2026.7.1 file store) for the
// runtimea adapter and gateway-supervisor tests. Its HTTP answers are the recorded ones
// (test/fixtures/runtimea/): /healthz, /readyz, 401 and 400 bodies, and chat streams replayed
// from the `.timed.txt` captures with their real gaps (run id and model rewritten). Like the
// real gateway it writes the session's row into its store ~150 ms after a chat request
// arrives (SQLite `session_nodes`, or `sessions.json` in file-store mode) and the run's
// transcript records before `[DONE]`; a client that disconnects mid-run gets its row marked
// `killed` and no transcript. Run as a program by test/fakes/bin/openclaw.mjs.
//
// The stream recording is picked by a marker in the user message:
//   (none) space-resume (0.5 s)   [[cold]] space-new-session (9.8 s of silence)
//   [[slow]] turn7-stream-slow-20s (20 s)   [[tool]] turn3-stream-toolcall
//   [[error]] error-in-stream (85 s of provider retries, then an `error` chunk; a test may cap
//   gaps with `maxGapMs` in fake-openclaw.json)
//   [[crash]] role chunk, then the process exits 1   [[hang]] role chunk, then nothing
import { randomUUID } from 'node:crypto';
import { appendFileSync, existsSync, mkdirSync, readdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import Database from 'better-sqlite3';
import { attachOperator } from './openclaw-operator.mjs';

const FIXTURES = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', 'fixtures', 'runtimea');
const HTTP = path.join(FIXTURES, '2026.9.6', 'http');
const STORE = path.join(FIXTURES, '..', 'sessions', 'runtimea-sqlite');
const TEMPLATE = path.join(STORE, 'transcripts', '108a772d-8161-424e-858e-135155ebc12c.jsonl');

const SCENARIOS = {
  default: 'space-resume',
  '[[cold]]': 'space-new-session',
  '[[slow]]': 'turn7-stream-slow-20s',
  '[[tool]]': 'turn3-stream-toolcall',
  '[[error]]': 'error-in-stream',
};

/** Settings a test leaves in <state dir>/fake-openclaw.json. */
export function settings(stateDir) {
  const file = path.join(stateDir, 'fake-openclaw.json');
  const defaults = { store: 'sqlite', startMs: 200, readyAfterMs: 150, doctorFixes: true };
  return existsSync(file) ? { ...defaults, ...JSON.parse(readFileSync(file, 'utf8')) } : defaults;
}

export function logInvocation(stateDir, entry) {
  mkdirSync(stateDir, { recursive: true });
  appendFileSync(path.join(stateDir, 'fake-openclaw.log.jsonl'), `${JSON.stringify({ pid: process.pid, ...entry })}\n`);
}

/** The recorded stream as [offset ms, line] pairs. */
function timed(name) {
  const file = path.join(HTTP, `${name}.timed.txt`);
  return readFileSync(file, 'utf8')
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => {
      const space = l.indexOf(' ');
      return [Math.round(Number(l.slice(0, space)) * 1000), l.slice(space + 1)];
    });
}

function legacyStores(stateDir) {
  const agents = path.join(stateDir, 'agents');
  if (!existsSync(agents)) return [];
  return readdirSync(agents)
    .map((a) => path.join(agents, a, 'sessions', 'sessions.json'))
    .filter((f) => existsSync(f));
}

class Store {
  constructor(stateDir, mode) {
    this.stateDir = stateDir;
    this.mode = mode;
  }

  dbFor(agent) {
    const file = path.join(this.stateDir, 'agents', agent, 'agent', 'openclaw-agent.sqlite');
    mkdirSync(path.dirname(file), { recursive: true });
    mkdirSync(path.join(this.stateDir, 'agents', agent, 'sessions'), { recursive: true });
    const db = new Database(file);
    db.pragma('journal_mode = WAL');
    // OpenClaw 2026.9.6's own session tables (recorded schema), plus the two its triggers name.
    if (!db.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'session_nodes'").get()) {
      db.exec('CREATE TABLE session_canonical_validation_pending (session_key TEXT PRIMARY KEY); CREATE TABLE conversations (conversation_id TEXT PRIMARY KEY);');
      db.exec(readFileSync(path.join(STORE, 'schema-session-tables.sql'), 'utf8'));
    }
    return db;
  }

  sessionsFile(agent) {
    return path.join(this.stateDir, 'agents', agent, 'sessions', 'sessions.json');
  }

  find(agent, key) {
    if (this.mode === 'file') {
      const file = this.sessionsFile(agent);
      const index = existsSync(file) ? JSON.parse(readFileSync(file, 'utf8')) : {};
      return index[key]?.sessionId;
    }
    const db = this.dbFor(agent);
    try {
      return db.prepare('SELECT current_session_id AS id FROM session_nodes WHERE session_key = ?').get(key)?.id;
    } finally {
      db.close();
    }
  }

  upsert(agent, key, sessionId, status) {
    const entry = { sessionId, updatedAt: Date.now(), status };
    if (this.mode === 'file') {
      const file = this.sessionsFile(agent);
      mkdirSync(path.dirname(file), { recursive: true });
      const index = existsSync(file) ? JSON.parse(readFileSync(file, 'utf8')) : {};
      index[key] = { ...index[key], ...entry, sessionFile: path.join(path.dirname(file), `${sessionId}.jsonl`) };
      writeFileSync(`${file}.tmp`, JSON.stringify(index, null, 2));
      renameSync(`${file}.tmp`, file);
      return;
    }
    const db = this.dbFor(agent);
    try {
      db.prepare('INSERT INTO session_nodes (session_key, current_session_id, entry_json, updated_at, status, created_at) VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT(session_key) DO UPDATE SET entry_json = excluded.entry_json, updated_at = excluded.updated_at, status = excluded.status').run(key, sessionId, JSON.stringify(entry), entry.updatedAt, status, entry.updatedAt);
      db.prepare("INSERT INTO session_windows (session_id, session_key, reason, created_at, updated_at, status) VALUES (?, ?, 'initial', ?, ?, ?) ON CONFLICT(session_id) DO UPDATE SET updated_at = excluded.updated_at, status = excluded.status").run(sessionId, key, entry.updatedAt, entry.updatedAt, status);
    } finally {
      db.close();
    }
  }

  append(agent, sessionId, records) {
    if (this.mode === 'file') {
      appendFileSync(path.join(this.stateDir, 'agents', agent, 'sessions', `${sessionId}.jsonl`), records.map((r) => `${JSON.stringify(r)}\n`).join(''));
      return;
    }
    const db = this.dbFor(agent);
    try {
      const next = (db.prepare('SELECT COALESCE(MAX(seq), 0) AS n FROM transcript_events WHERE session_id = ?').get(sessionId)?.n ?? 0) + 1;
      const insert = db.prepare('INSERT INTO transcript_events (session_id, seq, event_json, created_at) VALUES (?, ?, ?, ?)');
      records.forEach((r, i) => insert.run(sessionId, next + i, JSON.stringify(r), Date.now()));
    } finally {
      db.close();
    }
  }
}

/** The run's transcript records, in the recorded shapes (template: a recorded 2026.9.6 session). */
function transcriptRecords(sessionId, isNew, userText, answer, usage, runId) {
  const [header, modelChange, thinking, snapshot, user, assistant] = readFileSync(TEMPLATE, 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l));
  const now = new Date().toISOString();
  const records = isNew ? [{ ...header, id: sessionId, timestamp: now }, { ...modelChange, timestamp: now }, { ...thinking, timestamp: now }, { ...snapshot, timestamp: now }] : [];
  records.push({ ...user, id: randomUUID(), timestamp: now, message: { ...user.message, content: userText, timestamp: Date.now() } });
  const cached = usage?.prompt_tokens_details?.cached_tokens ?? 0;
  const u = usage ? { input: usage.prompt_tokens - cached, output: usage.completion_tokens, cacheRead: cached, cacheWrite: 0, totalTokens: usage.total_tokens, cost: { ...assistant.message.usage.cost } } : assistant.message.usage;
  records.push({ ...assistant, id: randomUUID(), timestamp: now, message: { ...assistant.message, content: [{ type: 'text', text: answer }], usage: u, timestamp: Date.now(), __openclaw: { runId } } });
  return records;
}

export function startGateway({ stateDir, port, token, onListening }) {
  const config = settings(stateDir);
  const configFile = process.env.OPENCLAW_CONFIG_PATH ?? path.join(stateDir, 'openclaw.json');
  const store = new Store(stateDir, config.store);
  const startedAt = Date.now();
  const readyz = readFileSync(path.join(HTTP, 'probe-readyz.json'), 'utf8');
  const server = createServer(async (req, res) => {
    const url = new URL(req.url, 'http://x');
    if (url.pathname === '/healthz') return json(res, 200, '{"ok":true,"status":"live"}');
    if (url.pathname === '/readyz') {
      return Date.now() - startedAt < config.readyAfterMs ? json(res, 503, '{"ready":false,"failing":["startup-sidecars"]}') : json(res, 200, readyz);
    }
    if (token !== null && req.headers.authorization !== `Bearer ${token}`) return json(res, 401, readFileSync(path.join(HTTP, 'turn10-noauth.sse'), 'utf8'));
    // Like the real one, the chat endpoint exists only while the config turns it on (read anew: hot reload).
    if (url.pathname !== '/v1/chat/completions' || req.method !== 'POST' || !chatEndpointOn(configFile)) return json(res, 404, '{"error":{"message":"Not Found","type":"not_found"}}');
    let raw = '';
    for await (const c of req) raw += c;
    const body = JSON.parse(raw);
    // No messages (the service's probe that the endpoint is served): refused before any run, like the real one.
    if (!Array.isArray(body.messages)) return json(res, 400, readFileSync(path.join(HTTP, 'turn9-bad-model-main.sse'), 'utf8'));
    logInvocation(stateDir, { chat: { model: body.model, stream: body.stream, include_usage: body.stream_options?.include_usage, messages: body.messages, sessionKey: req.headers['x-openclaw-session-key'] ?? null, modelOverride: req.headers['x-openclaw-model'] ?? null } });
    const target = /^openclaw(?:[/:](.+))?$/.exec(body.model ?? '');
    if (!target) return json(res, 400, readFileSync(path.join(HTTP, 'turn9-bad-model-main.sse'), 'utf8'));
    const agent = target[1] && target[1] !== 'default' ? target[1] : 'main';
    const header = req.headers['x-openclaw-session-key'];
    const key = `agent:${agent}:${header ?? `openai:${randomUUID()}`}`;
    const existing = store.find(agent, key);
    const sessionId = existing ?? randomUUID();
    setTimeout(() => store.upsert(agent, key, sessionId, 'running'), 150);
    const userText = body.messages?.at(-1)?.content ?? '';
    await stream(res, { store, agent, key, sessionId, isNew: !existing, userText, model: body.model });
  });
  attachOperator(server, { configFile, secret: token, settings: () => settings(stateDir), log: (entry) => logInvocation(stateDir, entry) });
  server.on('error', (err) => {
    process.stderr.write(`Gateway failed to start: ${err.message}\n`);
    process.exit(1);
  });
  server.listen(port, '127.0.0.1', () => onListening?.(server.address().port));
  return server;
}

async function stream(res, run) {
  const runId = `chatcmpl_${randomUUID()}`;
  let gone = false;
  res.on('close', () => {
    if (!res.writableEnded) {
      gone = true;
      run.store.upsert(run.agent, run.key, run.sessionId, 'killed');
    }
  });
  res.writeHead(200, { 'Content-Type': 'text/event-stream; charset=utf-8', 'Cache-Control': 'no-cache', Connection: 'keep-alive' });
  const marker = Object.keys(SCENARIOS).find((m) => run.userText.includes(m));
  if (run.userText.includes('[[crash]]') || run.userText.includes('[[hang]]')) {
    const [, first] = timed(SCENARIOS.default)[0];
    res.write(`${rewrite(first, runId, run.model)}\n\n`);
    if (run.userText.includes('[[crash]]')) setTimeout(() => process.exit(1), 100);
    return;
  }
  const lines = timed(SCENARIOS[marker ?? 'default']);
  const maxGap = settings(run.store.stateDir).maxGapMs ?? Infinity;
  let shift = 0;
  let previous = 0;
  for (const entry of lines) {
    shift += Math.max(0, entry[0] - previous - maxGap);
    previous = entry[0];
    entry[0] -= shift;
  }
  const t0 = Date.now();
  let answer = '';
  let usage;
  for (const [at, line] of lines) {
    const wait = at - (Date.now() - t0);
    if (wait > 0) await new Promise((r) => setTimeout(r, wait));
    if (gone) return;
    if (line === 'data: [DONE]') run.store.append(run.agent, run.sessionId, transcriptRecords(run.sessionId, run.isNew, run.userText, answer, usage, runId));
    if (line.startsWith('data: {')) {
      const chunk = JSON.parse(line.slice(6));
      answer += chunk.choices?.[0]?.delta?.content ?? '';
      usage = chunk.usage ?? usage;
    }
    res.write(`${rewrite(line, runId, run.model)}\n`);
  }
  run.store.upsert(run.agent, run.key, run.sessionId, 'done');
  res.end();
}

function rewrite(line, runId, model) {
  return line.replace(/chatcmpl_[0-9a-f-]{36}/g, runId).replace(/"model":"openclaw[^"]*"/, `"model":${JSON.stringify(model)}`);
}

function chatEndpointOn(configFile) {
  try {
    return JSON.parse(readFileSync(configFile, 'utf8')).gateway?.http?.endpoints?.chatCompletions?.enabled === true;
  } catch {
    return false;
  }
}

function json(res, status, body) {
  res.writeHead(status, { 'Content-Type': 'application/json; charset=utf-8' });
  res.end(body);
}

/** `openclaw doctor --fix`: imports a legacy sessions.json into the SQLite store and archives it. */
export function doctorFix(stateDir) {
  const store = new Store(stateDir, 'sqlite');
  for (const file of legacyStores(stateDir)) {
    const agent = path.basename(path.dirname(path.dirname(file)));
    const index = JSON.parse(readFileSync(file, 'utf8'));
    for (const [key, entry] of Object.entries(index)) store.upsert(agent, key, entry.sessionId, 'done');
    const archive = path.join(stateDir, 'agents', agent, 'session-sqlite-import-archive');
    mkdirSync(archive, { recursive: true });
    renameSync(file, path.join(archive, 'sessions.json'));
  }
}

export { legacyStores };
