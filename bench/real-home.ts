/**
 * A home as users have it (issue 35), in the formats the programs and the service write:
 * - OpenClaw's file store of 4 agents, each `sessions.json` holding full-size entries as the
 *   gateway 2026.7.1 writes them (the recorded entry of
 *   shared/fixtures/runtimes/runtimea/openclaw-2026.7.1-file-store, about 15 KB each,
 *   pretty-printed: 23 MB per agent at 1,500 sessions), no titles; its SQLite store (2026.9.6,
 *   the recorded rows) beside the file store of the first agent;
 * - Claude Code sessions run by the service: each in the service's store
 *   (`~/clia-space/<project>/sessions/sessions.json`, written as CliSessionStore writes it) and
 *   in its project's `sessionslist.json` (as recordProjectSession writes it); 30 % with a
 *   directory history of several choices;
 * - logs of `logBytes` in all, sizes spread as a user's are (most small, a few large), with
 *   the mtime of their last write, and one log of `bigLogBytes`.
 * Deterministic: the same options give the same sessions.
 */
import { readFileSync } from 'node:fs';
import { mkdir, utimes, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { FIXTURES, writeRuntimeaSqlite } from '../test/sessions/fixtures.js';
import { cliaLines, random, runtimeaLines, sentence, turns, uuid, writeBigLog } from './corpus.js';

export interface RealHomeOptions {
  runtimeaSessions: number;
  cliaSessions: number;
  logBytes: number;
  bigLogBytes: number;
  /** Newest session time (default: now). */
  now?: number;
  seed?: number;
}

export interface RealHome {
  /** Sessions the listing must show (the SQLite store's included). */
  total: number;
  newest: string;
  logBytes: number;
  indexBytes: number;
  bigLog: { id: string; file: string };
}

const AGENTS = ['main', 'work', 'research', 'ops'];
const PROJECTS = 40;
const DAY = 86_400_000;
/** The recorded OpenClaw 2026.7.1 entry every runtimea session is made from. */
const ENTRY_FIXTURE = '/work/shared/fixtures/runtimes/runtimea/openclaw-2026.7.1-file-store/sessions/sessions.json';

function recordedEntry(): Record<string, any> {
  const file = (() => {
    try {
      return readFileSync(ENTRY_FIXTURE, 'utf8');
    } catch {
      return readFileSync(path.join(FIXTURES, 'runtimea-file', 'sessions.json'), 'utf8');
    }
  })();
  return Object.values(JSON.parse(file) as Record<string, Record<string, any>>)[0]!;
}

/** One OpenClaw entry at full size, its ids and times those of this session. */
function runtimeaEntry(template: Record<string, any>, id: string, key: string, file: string, updatedAt: number): Record<string, any> {
  const e = structuredClone(template);
  Object.assign(e, { sessionId: id, updatedAt, sessionStartedAt: updatedAt - 4000, lastInteractionAt: updatedAt - 20, sessionFile: file, startedAt: updatedAt - 1700, lastActivityAt: updatedAt - 20, endedAt: updatedAt - 7 });
  if (e.systemPromptReport) Object.assign(e.systemPromptReport, { sessionId: id, sessionKey: key, generatedAt: updatedAt - 1200 });
  if (e.contextBudgetStatus) Object.assign(e.contextBudgetStatus, { sessionId: id, updatedAt: updatedAt - 1100 });
  return e;
}

/** Log sizes: exponential around the mean (most small, a few large), at least one turn. */
function logSize(rand: () => number, mean: number): number {
  return Math.min(40 * mean, Math.ceil(-Math.log(1 - rand()) * mean));
}

const PER_TURN = new Map<string, number>();
/** Bytes a turn takes in a format, measured once on 50 turns. */
function bytesPerTurn(kind: 'runtimea' | 'clia'): number {
  let n = PER_TURN.get(kind);
  if (n === undefined) {
    const rand = random(3);
    const lines = kind === 'runtimea' ? runtimeaLines(uuid(rand), turns(rand, 50), 0, rand) : cliaLines(uuid(rand), turns(rand, 50), 0, rand);
    n = Buffer.byteLength(lines.join('\n')) / 50;
    PER_TURN.set(kind, n);
  }
  return n;
}

export async function writeRealHome(home: string, options: RealHomeOptions): Promise<RealHome> {
  const rand = random(options.seed ?? 35);
  const now = options.now ?? Date.now();
  const sessions = options.runtimeaSessions + options.cliaSessions;
  const meanLog = options.logBytes / sessions;
  const template = recordedEntry();
  let logBytes = 0;
  let indexBytes = 0;
  let newest = { id: '', at: 0 };
  const when = (): number => now - Math.floor(rand() * 365 * DAY);
  const writeLog = async (file: string, kind: 'runtimea' | 'clia', id: string, updatedAt: number): Promise<void> => {
    const count = Math.max(1, Math.round(logSize(rand, meanLog) / bytesPerTurn(kind)));
    // The turns end before updatedAt (about 6 minutes apart), as the last write of the session.
    const start = updatedAt - count * 420_000 - 3_600_000;
    const shapes = turns(rand, count);
    const body = `${(kind === 'runtimea' ? runtimeaLines(id, shapes, start, rand) : cliaLines(id, shapes, start, rand)).join('\n')}\n`;
    await writeFile(file, body);
    const mtime = new Date(Math.min(now, updatedAt));
    await utimes(file, mtime, mtime);
    logBytes += Buffer.byteLength(body);
  };
  const seen = (id: string, at: number): void => {
    if (at > newest.at || (at === newest.at && id < newest.id)) newest = { id, at };
  };

  // OpenClaw's file store: 4 agents, no titles, full-size entries, pretty-printed.
  for (const [a, agent] of AGENTS.entries()) {
    const dir = path.join(home, '.runtimea', 'agents', agent, 'sessions');
    await mkdir(dir, { recursive: true });
    const index: Record<string, unknown> = {};
    for (let i = a; i < options.runtimeaSessions; i += AGENTS.length) {
      const id = uuid(rand);
      const updatedAt = i === 0 ? now : when();
      const file = path.join(dir, `${id}.jsonl`);
      const key = `agent:${agent}:openai-user:conv-${i}`;
      index[key] = runtimeaEntry(template, id, key, file, updatedAt);
      await writeLog(file, 'runtimea', id, updatedAt);
      seen(id, updatedAt);
    }
    const text = `${JSON.stringify(index, null, 2)}\n`;
    indexBytes += Buffer.byteLength(text);
    await writeFile(path.join(dir, 'sessions.json'), text);
  }
  // Beside it, the SQLite store of a gateway updated to 2026.9.6 (the recorded rows).
  writeRuntimeaSqlite(home, AGENTS[0]);
  const sqliteIds = new Set((JSON.parse(readFileSync(path.join(FIXTURES, 'runtimea-sqlite', 'session_windows.json'), 'utf8')) as Array<{ session_id: string }>).map((w) => w.session_id));

  // Claude Code sessions the service ran: its store and the project's index.
  const stores = new Map<string, Record<string, unknown>>();
  const projects = new Map<string, Record<string, unknown>>();
  let bigLog: RealHome['bigLog'] | undefined;
  for (let i = 0; i < options.cliaSessions; i++) {
    const pid = `project-${i % PROJECTS}`;
    const id = uuid(rand);
    const updatedAt = when();
    const dir = path.join(home, 'clia-space', pid, 'sessions');
    if (!stores.has(pid)) {
      stores.set(pid, {});
      projects.set(pid, {});
      await mkdir(dir, { recursive: true });
      await mkdir(path.join(home, 'space-projects', pid, '.space', 'sessions'), { recursive: true });
    }
    const title = sentence(rand, 3 + Math.floor(rand() * 8));
    const directory = `/home/user/space-projects/${pid}`;
    const created = updatedAt - DAY;
    const history = [{ directory, selectedAt: created }];
    // 30 %: the user moved the session between folders (PATCH), 2 to 8 times.
    if (rand() < 0.3) for (let k = 1 + Math.floor(rand() * 7); k > 0; k--) history.push({ directory: `${directory}/${sentence(rand, 1)}-${k}`, selectedAt: created + k * 60_000 });
    const current = history.at(-1)!.directory;
    stores.get(pid)![id] = { directory: current, directoryHistory: history, title, updatedAt, nativeSessionId: uuid(rand), sessionId: id };
    projects.get(pid)![id] = { sessionId: id, agent_name: 'clia_code', title, updatedAt, directory: current };
    const file = path.join(dir, `${id}.jsonl`);
    if (i === 1) {
      // The one very long session: 60 days old, off the first page.
      await writeBigLog(file, 'clia', options.bigLogBytes);
      bigLog = { id, file };
    } else await writeLog(file, 'clia', id, updatedAt);
    seen(id, updatedAt);
  }
  for (const [pid, index] of stores) {
    const text = `${JSON.stringify(index, null, 2)}\n`;
    indexBytes += Buffer.byteLength(text);
    await writeFile(path.join(home, 'clia-space', pid, 'sessions', 'sessions.json'), text);
    await writeFile(path.join(home, 'space-projects', pid, '.space', 'sessions', 'sessionslist.json'), `${JSON.stringify(projects.get(pid), null, 2)}\n`);
  }
  return { total: sessions + sqliteIds.size, newest: newest.id, logBytes, indexBytes, bigLog: bigLog! };
}
