import { randomUUID } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { HttpError } from '../../errors.js';
import { normalizeClib } from '../../transcripts/clib.js';
import type { CliSessionStore } from '../cli-session-store.js';
import type { ForkRequest } from '../runtime.js';
import { forkEntry } from '../fork-entry.js';
import { resumed } from '../turn-books.js';
import { AppServerRpc } from './rpc.js';
import type { TurnDeps } from './turn.js';

/**
 * A fork of a clib session with Codex's own `thread/fork {threadId, lastTurnId}` (inclusive),
 * over a one-shot app-server: the new thread holds the original's turns through the one
 * that holds the message, and the service's transcript of the fork the same turns' lines.
 * Codex forks by whole turns: a fork at a user message keeps the turns before its own.
 */
const FORK_TIMEOUT_MS = 60_000;

export async function forkClibSession(deps: TurnDeps, store: CliSessionStore, request: ForkRequest): Promise<{ sessionId: string }> {
  const { agentId, entry } = resumed(await store.find(request.sessionId));
  const threadId = typeof entry.nativeSessionId === 'string' ? entry.nativeSessionId : undefined;
  if (!threadId) throw new HttpError(400, 'This session has no Codex thread to fork yet');
  const lines = await readFile(store.transcriptFile(agentId, request.sessionId), 'utf8')
    .then((t) => t.split('\n').filter(Boolean))
    .catch(() => [] as string[]);
  const cut = cutOf(lines, request.messageId);
  const forkedThread = await forkThread(deps, entry.directory, threadId, cut.turns);
  const sessionId = randomUUID();
  // The entry before its transcript: the index never lists the fork from its log alone.
  await store.upsert(agentId, sessionId, { ...forkEntry(entry, request, forkedThread), agent_name: 'clib' });
  await store.append(agentId, sessionId, lines.slice(0, cut.lines));
  return { sessionId };
}

/** How many transcript lines and whole turns the fork keeps (turns: null = all). */
function cutOf(lines: readonly string[], messageId: string | undefined): { lines: number; turns: number | null } {
  if (messageId === undefined) return { lines: lines.length, turns: null };
  let position = 0;
  let turns = 0;
  let found: { turn: number; user: boolean } | undefined;
  const starts: number[] = [];
  for (let i = 0; i < lines.length; i += 1) {
    let record: unknown;
    try {
      record = JSON.parse(lines[i]!);
    } catch {
      record = undefined;
    }
    const user = (record as { type?: string } | undefined)?.type === 'user.message';
    if (user) {
      turns += 1;
      starts.push(i);
    }
    const entries = normalizeClib(record, { position, fallbackTime: '' });
    position += Buffer.byteLength(lines[i]!) + 1;
    if (!found && entries.some((e) => e.kind === 'message' && e.message.id === messageId)) found = { turn: turns, user };
  }
  if (!found) throw new HttpError(400, 'message_id is not a message of this session');
  const kept = found.user ? found.turn - 1 : found.turn;
  return { lines: starts[kept] ?? lines.length, turns: kept };
}

/** `thread/fork` through the `kept`-th turn (all when null); the new thread's id. */
async function forkThread(deps: TurnDeps, cwd: string, threadId: string, kept: number | null): Promise<string> {
  const proc = await deps.supervisor.spawn({ command: deps.command, args: ['app-server'], cwd, env: deps.env, stdio: ['pipe', 'pipe', 'pipe'] });
  const timer = setTimeout(() => void proc.stop(1000), FORK_TIMEOUT_MS);
  try {
    const rpc = new AppServerRpc(proc, () => undefined);
    await rpc.request('initialize', { clientInfo: { name: 'space', title: 'Space', version: deps.clientVersion }, capabilities: null });
    rpc.notify('initialized');
    let lastTurnId: string | undefined;
    if (kept !== null) {
      if (kept === 0) throw new HttpError(400, 'Codex cannot fork before the first turn of a thread');
      const page = await rpc.request<{ data: Array<{ id: string }> }>('thread/turns/list', { threadId, sortDirection: 'asc', limit: kept });
      lastTurnId = page.data[kept - 1]?.id;
      if (!lastTurnId) throw new HttpError(400, 'Codex does not have that turn of the thread');
    }
    const forked = await rpc.request<{ thread?: { id?: string } }>('thread/fork', { threadId, cwd, excludeTurns: true, ...(lastTurnId ? { lastTurnId } : {}) });
    const id = forked.thread?.id;
    if (!id) throw new Error('Codex answered thread/fork without a thread id');
    rpc.closeInput();
    return id;
  } finally {
    clearTimeout(timer);
    await proc.stop(1000);
  }
}
