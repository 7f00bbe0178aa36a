import path from 'node:path';
import { gatewayConfigFile, readGatewayConfig } from './gateway-config.js';

/**
 * The folder an OpenClaw agent's turns work in (its tools' cwd): the agent's `workspace` in the
 * gateway's config (`agents.entries.<id>`, or the legacy `agents.list`), else
 * `agents.defaults.workspace`, else OpenClaw's default `<state dir>/workspace[-<id>]`. Every
 * session of that agent shares it.
 */
export async function agentWorkspace(stateDir: string, home: string, agent: string): Promise<string> {
  const read = await readGatewayConfig(gatewayConfigFile(stateDir, process.env));
  const agents = read.state === 'ok' ? (read.config.agents ?? {}) : {};
  const listed = Array.isArray(agents.list) ? agents.list.find((a: { id?: unknown }) => a?.id === agent) : undefined;
  const entry = agents.entries?.[agent] ?? listed;
  const configured: unknown = entry?.workspace ?? agents.defaults?.workspace;
  if (typeof configured === 'string' && configured) return configured === '~' ? home : configured.startsWith('~/') ? path.join(home, configured.slice(2)) : path.resolve(stateDir, configured);
  return path.join(stateDir, agent === 'main' ? 'workspace' : `workspace-${agent}`);
}
