import type { EventHub } from '../events/hub.js';
import type { TurnFrame } from './turn-run.js';

/**
 * turn-started and turn-ended on the event channel. `state`: `running` when a turn starts;
 * at its end `done` (finish_reason `stop` or `aborted`) or `error` (finish_reason null).
 */
export interface TurnIdentity {
  streamId: string | null;
  sessionId: string | null;
  agentName: string;
}

export function turnStarted(hub: EventHub, turn: TurnIdentity): void {
  hub.publish('turn-started', { stream_id: turn.streamId, session_id: turn.sessionId, agent_name: turn.agentName, state: 'running', finish_reason: null });
}

export function turnEnded(hub: EventHub, turn: TurnIdentity, terminal: TurnFrame): void {
  const error = terminal.event === 'agent-error';
  hub.publish('turn-ended', {
    stream_id: turn.streamId,
    session_id: turn.sessionId,
    agent_name: turn.agentName,
    state: error ? 'error' : 'done',
    finish_reason: error ? null : (terminal.data.finish_reason ?? 'stop'),
  });
}

/**
 * `permission-needed {stream_id, session_id, request_id, title}`: a turn waits for the user's
 * decision. Sent by the engine when a turn's `permission-request` frame is made (the request
 * is then pending in the permission registry), so a view without that stream open can tell.
 */
export function permissionNeeded(hub: EventHub, turn: TurnIdentity, request: { requestId: string; title: string }): void {
  hub.publish('permission-needed', { stream_id: turn.streamId, session_id: turn.sessionId, request_id: request.requestId, title: request.title });
}
