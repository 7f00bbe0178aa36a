import { HttpError } from '../errors.js';
import type { PermissionOption } from '../runtimes/runtime.js';

/**
 * POST /api/chat/respond's body. The spec reserves the route as a no-op taking any JSON: a
 * body that names no `request_id` keeps that answer (`undefined` here, 200 {ok: true}); one
 * that names a request is checked field by field (400 with a `detail`).
 */
export interface RespondRequest {
  requestId: string;
  decision: PermissionOption;
  /** When given, the request must belong to this session (else 404). */
  sessionId?: string;
  message?: string;
  updatedInput?: Record<string, unknown>;
}

const DECISIONS: readonly PermissionOption[] = ['allow', 'deny', 'allow_session'];
const MAX_MESSAGE = 4000;

export function parseRespond(body: unknown): RespondRequest | undefined {
  if (!body || typeof body !== 'object' || Array.isArray(body)) return undefined;
  const b = body as Record<string, unknown>;
  if (!Object.hasOwn(b, 'request_id') && !Object.hasOwn(b, 'decision')) return undefined;
  if (typeof b.request_id !== 'string' || b.request_id === '') throw new HttpError(400, 'request_id must be a string');
  if (typeof b.decision !== 'string' || !(DECISIONS as readonly string[]).includes(b.decision)) throw new HttpError(400, `decision must be one of ${DECISIONS.join(', ')}`);
  const out: RespondRequest = { requestId: b.request_id, decision: b.decision as PermissionOption };
  if (b.session_id !== undefined && b.session_id !== null) {
    if (typeof b.session_id !== 'string') throw new HttpError(400, 'session_id must be a string');
    out.sessionId = b.session_id;
  }
  if (b.message !== undefined && b.message !== null) {
    if (typeof b.message !== 'string') throw new HttpError(400, 'message must be a string');
    if (b.message.length > MAX_MESSAGE) throw new HttpError(400, `message must be at most ${MAX_MESSAGE} characters`);
    out.message = b.message;
  }
  if (b.updated_input !== undefined && b.updated_input !== null) {
    if (typeof b.updated_input !== 'object' || Array.isArray(b.updated_input)) throw new HttpError(400, 'updated_input must be an object');
    out.updatedInput = b.updated_input as Record<string, unknown>;
  }
  return out;
}
