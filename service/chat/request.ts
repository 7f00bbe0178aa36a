import { HttpError } from '../errors.js';
import { PERMISSION_MODES, type PermissionMode } from '../runtimes/runtime.js';
import type { StreamEvents } from './frames.js';

/** POST /api/chat/prompt's body, checked. Absent, null and "" optional fields count as absent. */
export interface PromptRequest {
  text: string;
  sessionId?: string;
  agentName?: string;
  agentId?: string;
  space?: string;
  /** `agent_type` without any leading `/` or `$` (the runtime adds its own prefix). */
  skill?: string;
  model?: string;
  /** Beyond the spec (opt-in): absent is `auto`, today's behaviour. */
  permissionMode?: PermissionMode;
  /** Beyond the spec (opt-in): absent is `spec`, the spec's events only. */
  streamEvents?: StreamEvents;
}

/** Ids the service and the runtimes use as file names: nothing that could leave a folder. */
export const SAFE_ID = /^[A-Za-z0-9._-]{1,128}$/;
const SKILL = /^[A-Za-z0-9][A-Za-z0-9._:-]{0,127}$/;

export function parsePrompt(body: unknown): PromptRequest {
  const b = objectBody(body);
  if (typeof b.text !== 'string' || b.text.trim() === '') throw new HttpError(400, 'Empty message');
  const sessionId = optionalString(b, 'session_id');
  // An id that could not name a session file cannot name a session.
  if (sessionId !== undefined && (!SAFE_ID.test(sessionId) || sessionId === '.' || sessionId === '..')) throw new HttpError(404, 'Session not found');
  const agentId = optionalString(b, 'agent_id');
  if (agentId !== undefined && !isFolderName(agentId)) throw new HttpError(400, 'agent_id must be a folder name under the projects root');
  const agentType = parseSkill(optionalString(b, 'agent_type'));
  return {
    text: b.text.trim(),
    sessionId,
    agentName: optionalString(b, 'agent_name'),
    agentId,
    space: optionalString(b, 'space'),
    skill: agentType,
    model: optionalString(b, 'model'),
    ...optIns(b),
  };
}

/** The opt-in fields: a value outside their lists is 400, never a silent default. */
function optIns(b: Record<string, unknown>): Pick<PromptRequest, 'permissionMode' | 'streamEvents'> {
  const mode = optionalString(b, 'permission_mode');
  if (mode !== undefined && !(PERMISSION_MODES as readonly string[]).includes(mode)) throw new HttpError(400, `permission_mode must be one of ${PERMISSION_MODES.join(', ')}`);
  const events = optionalString(b, 'stream_events');
  if (events !== undefined && events !== 'spec' && events !== 'full') throw new HttpError(400, 'stream_events must be "spec" or "full"');
  return { ...(mode ? { permissionMode: mode as PermissionMode } : {}), ...(events ? { streamEvents: events } : {}) };
}

/** `agent_type`, with or without its `/` or `$` (the runtime adds its own prefix). */
export function parseSkill(value: string | undefined): string | undefined {
  const skill = value?.replace(/^[/$]/, '');
  if (skill === undefined || skill === '') return undefined;
  if (!SKILL.test(skill)) throw new HttpError(400, 'agent_type must be a skill name (letters, digits, ".", "_", ":" or "-")');
  return skill;
}

export function objectBody(body: unknown): Record<string, unknown> {
  if (!body || typeof body !== 'object' || Array.isArray(body)) throw new HttpError(400, 'Request body must be a JSON object');
  return body as Record<string, unknown>;
}

export function optionalString(body: Record<string, unknown>, field: string): string | undefined {
  const value = body[field];
  if (value === undefined || value === null || value === '') return undefined;
  if (typeof value !== 'string') throw new HttpError(400, `${field} must be a string`);
  return value;
}

export function isFolderName(value: string): boolean {
  return SAFE_ID.test(value) && value !== '.' && value !== '..';
}
