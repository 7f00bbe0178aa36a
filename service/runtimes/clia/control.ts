import type { Approvals, PermissionAnswer, PermissionAsk } from '../runtime.js';
import { toolTitle } from '../tool-title.js';
import type { CanUseTool } from './parser.js';
import type { UserContent } from './user-content.js';

/**
 * Claude Code's stream-json input channel (research clia-protocol.md §6): the prompt (and a
 * steer) as a user message, and the answers to `can_use_tool` control requests. Pure message builders
 * plus `answerCanUseTool`, which asks the engine and writes the answer when it comes.
 */
export function userMessage(content: UserContent): string {
  return JSON.stringify({ type: 'user', message: { role: 'user', content }, parent_tool_use_id: null, session_id: '' });
}

export function controlResponse(requestId: string, response: Record<string, unknown>): string {
  return JSON.stringify({ type: 'control_response', response: { subtype: 'success', request_id: requestId, response } });
}

/** Whether a stdout line is the control channel (not conversation: kept out of the transcript). */
export function isControlLine(line: string): boolean {
  return line.startsWith('{"type":"control_');
}

const DENIED = 'The user denied this action';

/**
 * Asks the engine about one `can_use_tool` and writes the CLI's answer. Without `approvals`
 * (no mode that asks) the answer is a deny, as the CLI's own default would be.
 */
export function answerCanUseTool(ask: CanUseTool, approvals: Approvals | undefined, cwd: string, write: (line: string) => void): void {
  if (!approvals) {
    write(controlResponse(ask.requestId, { behavior: 'deny', message: 'Nobody can be asked in this permission mode' }));
    return;
  }
  const rules = ask.suggestions.filter((s) => s.type === 'addRules');
  const request: PermissionAsk = {
    tool: ask.toolName,
    title: toolTitle(ask.toolName, ask.input, cwd),
    input: ask.input,
    options: rules.length ? ['allow', 'deny', 'allow_session'] : ['allow', 'deny'],
    takesUpdatedInput: true,
    ...(ask.toolUseId ? { toolCallId: ask.toolUseId } : {}),
  };
  void approvals.ask(request).then(
    (answer) => write(controlResponse(ask.requestId, responseOf(answer, ask, rules))),
    () => write(controlResponse(ask.requestId, { behavior: 'deny', message: DENIED })),
  );
}

function responseOf(answer: PermissionAnswer, ask: CanUseTool, rules: Array<Record<string, unknown>>): Record<string, unknown> {
  if (answer.decision === 'deny') return { behavior: 'deny', message: answer.message || DENIED };
  const response: Record<string, unknown> = { behavior: 'allow', updatedInput: answer.updatedInput ?? ask.input };
  // Remembered for this session only, never written to the project's settings.
  if (answer.decision === 'allow_session') response.updatedPermissions = rules.map((rule) => ({ ...rule, destination: 'session' }));
  return response;
}
