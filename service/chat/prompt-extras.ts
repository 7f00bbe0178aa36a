import { HttpError } from '../errors.js';
import { parseAttachmentRefs, type AttachmentRef } from './attachments.js';

/**
 * The prompt fields beyond the spec's (opt-in; a spec client sends none of them):
 * `delivery` for a prompt on a busy session ("queue", the default, or "steer") and
 * `attachments`. Parsed apart from request.ts so each feature keeps its own fields;
 * `stream_events` (which also decides whether a waiting follow-up's stream opens with
 * `queued {position}`) is request.ts's, parsed and validated there only.
 */
export interface PromptExtras {
  delivery?: 'queue' | 'steer';
  attachments?: AttachmentRef[];
}

export function parsePromptExtras(body: unknown): PromptExtras {
  const b = body && typeof body === 'object' && !Array.isArray(body) ? (body as Record<string, unknown>) : {};
  const out: PromptExtras = {};
  if (b.delivery !== undefined && b.delivery !== null) {
    if (b.delivery !== 'queue' && b.delivery !== 'steer') throw new HttpError(400, 'delivery must be "queue" or "steer"');
    out.delivery = b.delivery;
  }
  const attachments = parseAttachmentRefs(b.attachments);
  if (attachments) out.attachments = attachments;
  return out;
}
