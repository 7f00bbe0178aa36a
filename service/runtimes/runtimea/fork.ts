import { HttpError } from '../../errors.js';
import { normalizeRuntimea } from '../../transcripts/runtimea.js';
import type { ForkRequest } from '../runtime.js';
import { resumed } from '../turn-books.js';
import type { GatewayOperator } from './operator.js';
import type { GatewaySessionStore, SessionRow } from './session-store.js';

/**
 * A fork of a runtimea session with OpenClaw's own primitives over the operator connection
 * (research checkpoints-2026-11.md §2.3):
 * - `sessions.fork {sessionKey, agentId, entryId}` makes a new session holding what came
 *   before `entryId`, a persisted user message. The spec's `message_id` is inclusive, so the
 *   entry named is the first user message after it.
 * - When no user message follows (the whole conversation, or a message of the last exchange),
 *   there is nothing to cut before: `sessions.create {parentSessionKey, fork: true}` copies
 *   the parent's whole active path.
 * Either way the gateway writes the new session (its own key, `agent:<agent>:dashboard:<uuid>`
 * for sessions.fork) and its transcript; the service only reads them. The title is the
 * session key's `label` (the listing's title for a runtimea session), set by `sessions.patch`;
 * OpenClaw keeps labels unique per agent, so a second fork of one title is numbered.
 */
export interface RuntimeaForkDeps {
  readonly store: GatewaySessionStore;
  readonly operator: GatewayOperator;
}

const UNKNOWN_MESSAGE = 'message_id is not a message of this session';
/** OpenClaw's longest label (SESSION_LABEL_MAX_LENGTH is 512); titles are shorter already. */
const LABEL_MAX_CHARS = 500;
const MAX_NUMBERED_LABELS = 20;
/** How long the new session's row may take to show in the store after the gateway answered. */
const ROW_WAIT_MS = 5_000;

export async function forkRuntimeaSession(deps: RuntimeaForkDeps, request: ForkRequest): Promise<{ sessionId: string }> {
  const row = resumed(await deps.store.bySessionId(request.sessionId));
  const entryId = cutBefore((await deps.store.transcript(row.agent, row.sessionId)) ?? '', request.messageId);
  deps.operator.retain();
  try {
    const sessionKey = await gatewayFork(deps.operator, row, entryId);
    await labelFork(deps.operator, row.agent, sessionKey, `${request.title || 'Session'} (fork)`);
    return { sessionId: (await newRow(deps.store, row.agent, sessionKey)).sessionId };
  } finally {
    deps.operator.release();
  }
}

/**
 * The user message the fork is cut before: the first one after `messageId` (inclusive
 * fork), or null when none follows (the whole conversation). A user message is cut before
 * itself (the gateway cuts only before a prompt). 400 for an unknown message.
 */
export function cutBefore(jsonl: string, messageId: string | undefined): string | null {
  let found = messageId === undefined;
  let position = 0;
  for (const line of jsonl.split('\n')) {
    if (!line.trim()) continue;
    let record: unknown;
    try {
      record = JSON.parse(line);
    } catch {
      continue;
    }
    const entries = normalizeRuntimea(record, { position: position++, fallbackTime: '' });
    const user = entries.find((e) => e.kind === 'message' && e.message.role === 'user');
    const userId = user?.kind === 'message' ? user.message.id : undefined;
    if (found && userId !== undefined && messageId !== undefined) return userId;
    // A user message itself: the conversation through the turn before it (as on clia and clib).
    if (!found && userId !== undefined && userId === messageId) return userId;
    if (!found && entries.some((e) => e.kind === 'message' && e.message.id === messageId)) found = true;
  }
  if (!found) throw new HttpError(400, UNKNOWN_MESSAGE);
  return null;
}

/** The gateway's fork; the new session's key. */
async function gatewayFork(operator: GatewayOperator, row: SessionRow, entryId: string | null): Promise<string> {
  try {
    const answer = entryId
      ? await operator.call('sessions.fork', { sessionKey: row.sessionKey, agentId: row.agent, entryId })
      : await operator.call('sessions.create', { agentId: row.agent, parentSessionKey: row.sessionKey, fork: true });
    const key = (answer as { sessionKey?: unknown; key?: unknown } | undefined)?.sessionKey ?? (answer as { key?: unknown } | undefined)?.key;
    if (typeof key !== 'string' || !key) throw new Error('the gateway answered without the new session key');
    return key;
  } catch (err) {
    throw refused(err);
  }
}

/** The fork's title: its key's label, numbered when a label is taken already. */
async function labelFork(operator: GatewayOperator, agent: string, sessionKey: string, title: string): Promise<void> {
  const base = Array.from(title).slice(0, LABEL_MAX_CHARS).join('');
  for (let n = 1; n <= MAX_NUMBERED_LABELS; n++) {
    const label = n === 1 ? base : `${base} ${n}`;
    try {
      await operator.call('sessions.patch', { key: sessionKey, agentId: agent, label });
      return;
    } catch (err) {
      if (!/label already in use/i.test((err as Error).message)) throw refused(err);
    }
  }
}

/** The store's row of the new key (the gateway writes it before it answers; a short wait covers a slow commit). */
async function newRow(store: GatewaySessionStore, agent: string, sessionKey: string): Promise<SessionRow> {
  const deadline = Date.now() + ROW_WAIT_MS;
  for (;;) {
    const row = await store.byKey(agent, sessionKey);
    if (row) return row;
    if (Date.now() > deadline) throw new HttpError(502, `The runtimea gateway forked the session into ${sessionKey}, but its store does not show it`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** A gateway refusal as the client's answer: a run in progress is 409, a refused request 400, anything else 502. */
function refused(err: unknown): HttpError {
  if (err instanceof HttpError) return err;
  const { message, code } = err as { message?: string; code?: string };
  const detail = `The runtimea gateway could not fork the session: ${message ?? String(err)}`;
  if (/while the agent is working/i.test(message ?? '')) return new HttpError(409, detail);
  return new HttpError(code === 'INVALID_REQUEST' ? 400 : 502, detail);
}
