/**
 * Which runtime and workspace a document belongs to, as words of its own column, so the
 * `agent_name` and `ws` filters are part of the FTS5 match (the index intersects them with
 * the query's words) rather than a check of every match afterwards. Each value is one
 * token: `a` or `w` and the value's UTF-8 bytes in hex (letters and digits only, so the
 * tokenizer keeps it whole; user words never reach this column).
 */
export function scopeText(agentName: string, agentId: string): string {
  return `${agentToken(agentName)} ${workspaceToken(agentId)}`;
}

export function agentToken(agentName: string): string {
  return `a${hex(agentName)}`;
}

export function workspaceToken(agentId: string): string {
  return `w${hex(agentId)}`;
}

/** The FTS5 expression selecting these scopes, or undefined for no filter. */
export function scopeFilter(filter: { agentName?: string; workspace?: string }): string | undefined {
  const tokens = [
    ...(filter.agentName !== undefined ? [agentToken(filter.agentName)] : []),
    ...(filter.workspace !== undefined ? [workspaceToken(filter.workspace)] : []),
  ];
  return tokens.length > 0 ? `scope : (${tokens.join(' AND ')})` : undefined;
}

function hex(value: string): string {
  return Buffer.from(value, 'utf8').toString('hex');
}
