/**
 * codex's tool items (exec's snake_case ThreadItem shape, as the clib transcripts keep them)
 * as one tool call and its result: the single mapping behind both the live stream
 * (runtimes/clib/thread-events.ts) and /api/messages (clib.ts), so the two show the same
 * tool names, inputs, outputs and outcomes. Pure.
 *
 * - command_execution: `command_execution {command}`, output the aggregated output; an error
 *   when it failed, was declined, or exited non-zero.
 * - file_change: `file_change {changes}`; an error when it failed or was declined.
 * - mcp_tool_call: the MCP tool's own name, input `{server, arguments}`, output the result or
 *   `{error}`; an error when it has one or failed.
 * - web_search: `web_search {query, action}`; collab_tool_call: its tool name, the item.
 */
type Json = Record<string, unknown>;

export interface ClibToolCall {
  id: string;
  name: string;
  input: unknown;
}

export interface ClibToolResult extends ClibToolCall {
  output: unknown;
  isError: boolean;
  details?: Record<string, unknown>;
}

export const TOOL_ITEM_TYPES: ReadonlySet<string> = new Set(['command_execution', 'file_change', 'mcp_tool_call', 'web_search', 'collab_tool_call']);

const FAILED = new Set(['failed', 'declined']);

/** The call an item makes (item.started or item.completed); undefined when it is no tool. */
export function toolCallOf(item: Json): ClibToolCall | undefined {
  const id = typeof item.id === 'string' ? item.id : '';
  switch (item.type) {
    case 'command_execution':
      return { id, name: 'command_execution', input: { command: item.command } };
    case 'file_change':
      return { id, name: 'file_change', input: { changes: item.changes ?? [] } };
    case 'mcp_tool_call':
      return { id, name: typeof item.tool === 'string' && item.tool ? item.tool : 'mcp_tool_call', input: { server: item.server, arguments: item.arguments ?? {} } };
    case 'web_search':
      return { id, name: 'web_search', input: { query: item.query, action: item.action } };
    case 'collab_tool_call':
      return { id, name: typeof item.tool === 'string' && item.tool ? item.tool : 'collab_tool_call', input: item };
    default:
      return undefined;
  }
}

/** A completed tool item: its call and its result. */
export function toolResultOf(item: Json): ClibToolResult | undefined {
  const call = toolCallOf(item);
  if (!call) return undefined;
  const failed = FAILED.has(String(item.status));
  switch (item.type) {
    case 'command_execution':
      return { ...call, output: item.aggregated_output ?? '', isError: failed || (typeof item.exit_code === 'number' && item.exit_code !== 0), details: { exit_code: item.exit_code ?? null, status: item.status } };
    case 'file_change':
      return { ...call, output: '', isError: failed, details: { status: item.status } };
    case 'mcp_tool_call': {
      const error = item.error && typeof item.error === 'object' ? (item.error as Json).message : undefined;
      return { ...call, output: error !== undefined ? { error } : (item.result ?? null), isError: error !== undefined || failed };
    }
    default:
      return { ...call, output: null, isError: failed };
  }
}
