/**
 * The records of the service's clib transcripts, ~/clib-space/<agent_id>/sessions/<id>.jsonl:
 * codex's ThreadEvents in the snake_case shape its `exec --json` printed (the format the
 * transcripts were first written in, kept so old transcripts read the same), each with an
 * ISO 8601 `timestamp`; a turn opens with the service's `user.message` line, and
 * `turn.completed` carries that turn's own usage (with `model` when known). The driver maps
 * `codex app-server` notifications to these shapes (runtimes/clib/app-server-map.ts).
 */
export type ThreadItem =
  | { id: string; type: 'agent_message'; text: string }
  | { id: string; type: 'reasoning'; text: string }
  | { id: string; type: 'command_execution'; command: string; aggregated_output: string; exit_code: number | null; status: string }
  | { id: string; type: 'file_change'; changes: Array<{ path: string; kind: string }>; status: string }
  | { id: string; type: 'mcp_tool_call'; server: string; tool: string; arguments: unknown; result?: unknown; error?: { message: string } | null; status: string }
  | { id: string; type: 'web_search'; query: string }
  | { id: string; type: 'todo_list'; items: Array<{ text: string; completed: boolean }> }
  | { id: string; type: 'error'; message: string };

export interface ThreadUsage {
  input_tokens: number;
  cached_input_tokens: number;
  cache_write_input_tokens?: number;
  output_tokens: number;
  reasoning_output_tokens?: number;
}

export type ThreadEvent =
  | { type: 'thread.started'; thread_id: string }
  | { type: 'turn.started' }
  | { type: 'item.started' | 'item.updated' | 'item.completed'; item: ThreadItem }
  /**
   * `last_token_usage` (the turn's last model request: the conversation's size) and
   * `model_context_window` come from app-server's thread token usage `last` and
   * `modelContextWindow` (written since the context meter; older lines have neither).
   */
  | { type: 'turn.completed'; usage: ThreadUsage; model?: string; last_token_usage?: ThreadUsage & { total_tokens: number }; model_context_window?: number }
  | { type: 'turn.failed'; error: { message: string } }
  | { type: 'error'; message: string };

/** The service's record of a prompt (or a steer): the first line of a turn. */
export interface UserMessageLine {
  type: 'user.message';
  text: string;
  attachments?: Array<{ name: string; path: string; mime: string }>;
}

/** One line of a clib transcript (before its `timestamp` is added). */
export type TranscriptLine = ThreadEvent | UserMessageLine;
