import path from 'node:path';
import { HttpError } from '../errors.js';
import { SAFE_ID } from '../ids.js';
import { PERMISSION_MODES, type PermissionMode } from '../runtimes/runtime.js';
import type { StreamEvents } from './frames.js';

/**
 * POST /api/chat/prompt's body, checked. Absent, null and "" optional fields count as absent,
 * except `agent_name`: a present one must name a backend, so "" is refused (400) like any
 * other unknown name rather than falling through to the default backend.
 */
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

/** A skill name: nothing that could leave a folder. */
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
    agentName: agentNameOf(b),
    agentId,
    space: parseSpace(optionalString(b, 'space')),
    skill: agentType,
    model: optionalString(b, 'model'),
    ...optIns(b),
  };
}

/** `agent_name` as sent: undefined only when absent or null ("" is a name, and no backend's). */
export function agentNameOf(body: Record<string, unknown>): string | undefined {
  const value = body.agent_name;
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'string') throw new HttpError(400, 'agent_name must be a string');
  return value;
}

/** Paths in bodies are absolute (spec); `space` may also start with `~/` (it is expanded). */
function parseSpace(value: string | undefined): string | undefined {
  if (value === undefined || value === '~' || value.startsWith('~/') || path.isAbsolute(value)) return value;
  throw new HttpError(400, 'space must be absolute');
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
