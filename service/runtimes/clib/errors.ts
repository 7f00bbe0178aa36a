/**
 * codex's failure texts, as recorded (research clib-protocol.md §5 and the app-server
 * fixtures), turned into sentences a user can act on. codex's own text is kept at the end:
 * it carries the request id and URL a bug report needs.
 */
export function readableCodexError(message: string, httpStatus?: number): string {
  const status = httpStatus ?? statusIn(message);
  if (status === 401 || status === 403) {
    return `Codex could not authenticate with the model provider (${status}). Check PROVB_API_KEY in the active env file, or sign in again with clib setup. Codex said: ${message}`;
  }
  if (status === 429) return `The model provider is rate-limiting Codex (429) and its retries ran out. Try again later. Codex said: ${message}`;
  if ((status !== undefined && status >= 500) || /high demand|internal server error/i.test(message)) {
    return `The model provider failed with a server error, and Codex's retries ran out. Try again later. Codex said: ${message}`;
  }
  if (/stream disconnected before completion/i.test(message)) return `The model's answer broke off before it was complete. Codex said: ${message}`;
  return `Codex failed: ${message}`;
}

export function unknownThreadError(threadId: string, detail: string): string {
  return `Codex has no record of this session's thread ${threadId} (its rollout under $CODEX_HOME/sessions is gone), so the session cannot be resumed; start a new one. Codex said: ${detail}`;
}

export function missingBinaryError(command: string): string {
  return `The Codex CLI was not found ('${command}'). Install @openai/codex (0.169.0 is the tested version) or set SPACE_CLIB_BIN to its path.`;
}

export function crashError(exit: { code: number | null; signal: NodeJS.Signals | null }, stderrTail: string): string {
  const how = exit.signal ? `was killed by ${exit.signal}` : `exited with code ${exit.code}`;
  const tail = stderrTail.trim();
  return `Codex ${how} before the turn finished.${tail ? ` Its last output: ${tail}` : ''}`;
}

function statusIn(message: string): number | undefined {
  const match = /\b(?:status:?|status)\s+(\d{3})\b/i.exec(message) ?? /\b(401|403|429|5\d\d)\b\s+[A-Z]/.exec(message);
  return match ? Number(match[1]) : undefined;
}
