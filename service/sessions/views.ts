import { HttpError } from '../errors.js';
import type { SentAttachments } from '../runtimes/runtimea/sent-attachments.js';
import type { Page } from './file-log.js';
import { mapLimited } from './limit.js';
import type { SessionView } from './merge.js';
import type { SessionIndex } from './session-index.js';
import type { Session } from './types.js';
import { isRetained, originOf } from './fold.js';

/** Fields another feature adds to a session's entry (a fork's `forked_from`); additive, absent by default. */
export type SessionExtras = (sessionId: string) => Promise<Record<string, unknown> | undefined>;

export async function sessionOf(index: SessionIndex, view: SessionView, extras?: SessionExtras): Promise<Session> {
  await index.ensureTitle(view);
  return {
    ...(await extras?.(view.id)),
    session_id: view.id,
    title: view.title,
    agent_id: view.agentId,
    agent_name: view.agentName,
    updated_at: new Date(view.updatedAtMs).toISOString(),
    directory: view.directory,
    message_count: await index.messageCount(view),
    origin: originOf(view.records[0]!),
    ...(isRetained(view.records) ? { retained: true as const } : {}),
  };
}

/** {total, offset, sessions}: a slice of `views`; counts not cached yet are counted now. */
export async function sessionPage(index: SessionIndex, views: readonly SessionView[], offset: number, limit: number, extras?: SessionExtras): Promise<{ total: number; offset: number; sessions: Session[] }> {
  const slice = views.slice(offset, offset + limit);
  return { total: views.length, offset, sessions: await mapLimited(slice, 16, (v) => sessionOf(index, v, extras)) };
}

/**
 * {total, offset, messages} of a session's log; 404 when the session or its log is missing.
 * A runtimea session's user messages get the attachments the service sent with them (its own
 * record: the gateway's store keeps an image as `[image]`); the CLI logs carry theirs.
 */
export async function messagesPage(index: SessionIndex, id: string, offset: number, limit: number, sent?: SentAttachments): Promise<Page> {
  const view = await index.get(id);
  if (!view?.log) throw new HttpError(404, 'Session not found');
  try {
    const page = await index.logs.page(view.log, offset, limit);
    return sent && view.agentName === 'runtimea' ? { ...page, messages: await sent.withAttachments(view.id, page.messages) } : page;
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' || code === 'ENOTDIR' || code === 'SQLITE_CANTOPEN') throw new HttpError(404, 'Session not found');
    throw err;
  }
}
