import { HttpError } from '../errors.js';
import type { AgentName, Runtime } from '../runtimes/runtime.js';
import type { SessionIndex } from '../sessions/session-index.js';
import { messagesPage } from '../sessions/views.js';
import type { ForkBook } from './forks.js';
import type { TurnEntry, TurnLedger } from './ledger.js';

/**
 * POST /api/sessions/{id}/fork: a new session of the same runtime and project whose
 * conversation is the original's up to the message (the runtime's own fork primitive), and,
 * with `restore_files`, the project's files as they were after the turn that holds it:
 * every later entry of the ledger reverted, newest first, all or nothing.
 */
export interface ForkDeps {
  readonly sessions: SessionIndex;
  readonly runtimes: ReadonlyMap<AgentName, Runtime>;
}

export interface ForkBody {
  message_id?: string | undefined;
  restore_files?: boolean | undefined;
  force?: boolean | undefined;
}

/** What a fork needs of the checkpoints (checkpoints.ts): the ledger, the busy rule, the revert. */
export interface Checkpoints {
  readonly ledger: TurnLedger;
  busy(sessionId: string): boolean;
  revert(sessionId: string, turnId: string, force: boolean): Promise<{ turn_id: string }>;
}

const UNKNOWN_MESSAGE = 'message_id is not a message of this session';

export async function forkSession(deps: ForkDeps, checkpoints: Checkpoints, forks: ForkBook, sessionId: string, body: ForkBody): Promise<{ session_id: string }> {
  const session = await deps.sessions.get(sessionId);
  if (!session) throw new HttpError(404, 'Session not found');
  const runtime = deps.runtimes.get(session.agentName);
  if (!runtime?.fork) throw new HttpError(400, `The ${session.agentName} runtime cannot fork a conversation`);
  if (checkpoints.busy(sessionId)) throw new HttpError(409, 'A turn of this session is running or queued; fork once it has ended');
  const undo = body.restore_files ? await revertLater(deps, checkpoints, sessionId, body) : async () => undefined;
  let forked: { sessionId: string };
  try {
    await deps.sessions.ensureTitle(session);
    forked = await runtime.fork({ sessionId, title: session.title, ...(body.message_id !== undefined ? { messageId: body.message_id } : {}) });
  } catch (err) {
    await undo();
    throw err;
  }
  await forks.put(forked.sessionId, { session_id: sessionId, message_id: body.message_id ?? null });
  // Listed at once: the index reads the new session's files before the answer.
  await deps.sessions.settleSession(forked.sessionId);
  return { session_id: forked.sessionId };
}

/** Reverts every entry after the turn that holds the message, newest first; on a failure the ones done are reverted back. */
async function revertLater(deps: ForkDeps, checkpoints: Checkpoints, sessionId: string, body: ForkBody): Promise<() => Promise<void>> {
  const later = await laterEntries(deps, checkpoints, sessionId, body.message_id);
  const done: string[] = [];
  const undo = async (): Promise<void> => {
    for (const id of [...done].reverse()) await checkpoints.revert(sessionId, id, true).catch(() => undefined);
  };
  try {
    for (const entry of [...later].reverse()) done.push((await checkpoints.revert(sessionId, entry.turn_id, body.force === true)).turn_id);
  } catch (err) {
    await undo();
    throw err;
  }
  return undo;
}

async function laterEntries(deps: ForkDeps, checkpoints: Checkpoints, sessionId: string, messageId: string | undefined): Promise<TurnEntry[]> {
  const { turns } = await checkpoints.ledger.read(sessionId);
  if (messageId === undefined) return [];
  const order = await messageOrder(deps.sessions, sessionId);
  const at = order.get(messageId);
  if (at === undefined) throw new HttpError(400, UNKNOWN_MESSAGE);
  // The turn that holds the message: the last turn whose prompt comes at or before it.
  let holder = -1;
  turns.forEach((t, i) => {
    const position = t.user_message_id === null ? undefined : order.get(t.user_message_id);
    if (t.kind === 'turn' && position !== undefined && position <= at) holder = i;
  });
  return turns.slice(holder + 1);
}

/** Every message id of the session, with its place. */
async function messageOrder(sessions: SessionIndex, sessionId: string): Promise<Map<string, number>> {
  const order = new Map<string, number>();
  for (let offset = 0; ; offset += 1000) {
    const page = await messagesPage(sessions, sessionId, offset, 1000);
    page.messages.forEach((m, i) => order.set(m.id, offset + i));
    if (page.messages.length < 1000) return order;
  }
}
