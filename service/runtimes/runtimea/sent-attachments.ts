import path from 'node:path';
import { SAFE_ID } from '../../ids.js';
import { JsonFile } from '../../stores/json-file.js';

/** What /api/messages shows of an attachment: never its bytes. */
export interface AttachmentRecord {
  name: string;
  path: string;
  mime: string;
}

/** One session's file: the gateway's user record id -> what the service attached to that message. */
type SessionAttachments = Record<string, AttachmentRecord[]>;

/**
 * The attachments the service sent with runtimea prompts. The gateway's store keeps an image
 * as an `image` block (shown as `[image]`) and nothing of its name or path, so the service
 * keeps its own record, as it does in its clia and clib transcripts: one small JSON file per
 * session under the service's state folder (`~/.space-state/runtimea-attachments/<session_id>.json`, 0600),
 * keyed by the id of the gateway's user record; /api/messages adds them to that message.
 */
export class SentAttachments {
  constructor(private readonly dir: string) {}

  async record(sessionId: string, messageId: string, attachments: readonly AttachmentRecord[]): Promise<void> {
    const file = this.file(sessionId);
    if (!file || attachments.length === 0) return;
    await file.update((current) => ({ next: { ...current, [messageId]: attachments.map(({ name, path, mime }) => ({ name, path, mime })) }, result: undefined }));
  }

  /** The session's records; none when it has no file (or one that cannot be read). */
  async read(sessionId: string): Promise<SessionAttachments> {
    const doc = await this.file(sessionId)?.read().catch(() => undefined);
    return doc && typeof doc === 'object' && !Array.isArray(doc) ? doc : {};
  }

  /** A page's messages with their attachments added (user messages the service sent with some). */
  async withAttachments<M extends { id: string; role: string; attachments?: AttachmentRecord[] }>(sessionId: string, messages: M[]): Promise<M[]> {
    if (!messages.some((m) => m.role === 'user')) return messages;
    const sent = await this.read(sessionId);
    return messages.map((m) => {
      const records = m.role === 'user' && Object.hasOwn(sent, m.id) ? validRecords(sent[m.id]) : [];
      return records.length ? { ...m, attachments: records } : m;
    });
  }

  private file(sessionId: string): JsonFile<SessionAttachments> | undefined {
    return SAFE_ID.test(sessionId) ? new JsonFile<SessionAttachments>(path.join(this.dir, `${sessionId}.json`), () => ({}), { mode: 0o600, dirMode: 0o700 }) : undefined;
  }
}

function validRecords(value: unknown): AttachmentRecord[] {
  if (!Array.isArray(value)) return [];
  return value.flatMap((a) => (a && typeof a.name === 'string' && typeof a.path === 'string' && typeof a.mime === 'string' ? [{ name: a.name, path: a.path, mime: a.mime }] : []));
}
