import { readFile } from 'node:fs/promises';
import path from 'node:path';
import JSON5 from 'json5';

/**
 * The gateway's own config, `<state dir>/openclaw.json` (OPENCLAW_CONFIG_PATH overrides it):
 * OpenClaw's file, JSON5 (users edit it by hand: comments, trailing commas, unquoted keys), so it
 * is read with the json5 package, as OpenClaw reads it. The service changes it only through
 * OpenClaw itself, which keeps its backups and clobber checks: the running gateway's
 * `config.patch` (chat-endpoint.ts), else its CLI (`openclaw config set`).
 */
export type ConfigRead = { state: 'ok'; config: Record<string, any> } | { state: 'missing' } | { state: 'unreadable' };

export function gatewayConfigFile(stateDir: string, env: NodeJS.ProcessEnv): string {
  return env.OPENCLAW_CONFIG_PATH || path.join(stateDir, 'openclaw.json');
}

export async function readGatewayConfig(file: string): Promise<ConfigRead> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'ENOENT' ? { state: 'missing' } : { state: 'unreadable' };
  }
  try {
    const config = JSON5.parse(text) as unknown;
    return config && typeof config === 'object' && !Array.isArray(config) ? { state: 'ok', config: config as Record<string, any> } : { state: 'unreadable' };
  } catch {
    return { state: 'unreadable' };
  }
}

/** The HTTP chat endpoint is off by default; the service needs it on. */
export function chatEndpointEnabled(read: ConfigRead): boolean {
  return read.state === 'ok' && read.config.gateway?.http?.endpoints?.chatCompletions?.enabled === true;
}

export const ENABLE_CHAT_ENDPOINT = ['config', 'set', 'gateway.http.endpoints.chatCompletions.enabled', 'true', '--strict-json'];
/** The same change as a JSON merge patch, for the gateway's `config.patch`. */
export const CHAT_ENDPOINT_PATCH = JSON.stringify({ gateway: { http: { endpoints: { chatCompletions: { enabled: true } } } } });
export const DOCTOR_FIX = ['doctor', '--fix', '--yes', '--non-interactive'];
