import type { ExitStatus } from '../../process/supervisor.js';
import type { RuntimeEvent } from '../runtime.js';
import type { CliaResult } from './parser.js';

/**
 * How a Claude Code turn ended, as the one terminal event. Pure. An abort always ends in
 * `done {aborted}` (the CLI's own result after SIGINT is an error). Otherwise the `result`
 * line decides, by `is_error`; without one, the exit status and the last stderr line do
 * (argument errors print one `Error: ...` line and nothing on stdout).
 */
export interface TurnEnd {
  aborted: boolean;
  result: CliaResult | undefined;
  /** Known once the program has exited; not needed when a result was read. */
  exit?: ExitStatus;
  stderr: string;
}

export function outcomeOf(end: TurnEnd): Extract<RuntimeEvent, { type: 'done' | 'error' }> {
  if (end.aborted) return { type: 'done', finishReason: 'aborted' };
  if (end.result) return end.result.isError ? { type: 'error', message: end.result.message } : { type: 'done', finishReason: 'stop' };
  const said = lastLine(end.stderr);
  if (said) return { type: 'error', message: said };
  const exit = end.exit;
  if (exit?.signal) return { type: 'error', message: `Claude Code was stopped by ${exit.signal} before it answered` };
  if (exit && exit.code !== 0) return { type: 'error', message: `Claude Code exited with code ${exit.code} before it answered` };
  return { type: 'error', message: 'Claude Code ended without a result' };
}

function lastLine(text: string): string {
  const lines = text.split(/\r?\n/).map((l) => l.trim()).filter(Boolean);
  const line = lines.at(-1) ?? '';
  return line.length > 500 ? `${line.slice(0, 497)}...` : line;
}
