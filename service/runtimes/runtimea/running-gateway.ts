import { readFile } from 'node:fs/promises';
import { request } from 'node:http';
import path from 'node:path';
import { getJson, isGatewayProcess } from './stale.js';

/**
 * A gateway already running for the state folder, e.g. the user's own daemon (`openclaw
 * gateway`, or the service OpenClaw's onboarding installs). OpenClaw 2026.9 lets one gateway
 * own a state folder and records the owner in
 * `<state dir>/tmp/openclaw-<uid>/gateway.state.lock` ({pid, port, stateDir, ...}; docs
 * gateway/gateway-lock.md). The owner counts when its pid is still an OpenClaw gateway and its
 * port answers /healthz as one; a second gateway for the folder would only fail on the lock.
 */
export interface RunningGateway {
  pid: number;
  port: number;
}

export function stateLockFile(stateDir: string): string {
  const uid = typeof process.getuid === 'function' ? process.getuid() : undefined;
  return path.join(stateDir, 'tmp', uid === undefined ? 'openclaw' : `openclaw-${uid}`, 'gateway.state.lock');
}

export async function runningGatewayFor(stateDir: string): Promise<RunningGateway | undefined> {
  let record: { pid?: unknown; port?: unknown };
  try {
    const text = await readFile(stateLockFile(stateDir), 'utf8');
    // The record is JSON, padded after its closing brace.
    record = JSON.parse(text.slice(0, text.lastIndexOf('}') + 1)) as typeof record;
  } catch {
    return undefined;
  }
  const { pid, port } = record;
  if (!Number.isInteger(pid) || (pid as number) <= 1 || !Number.isInteger(port) || (port as number) <= 0 || (port as number) > 65535) return undefined;
  if (!isGatewayProcess(pid as number)) return undefined;
  const health = await getJson(`http://127.0.0.1:${port as number}/healthz`, 1500);
  return health?.body?.ok === true && health.body.status === 'live' ? { pid: pid as number, port: port as number } : undefined;
}

/**
 * Whether the gateway serves the HTTP chat endpoint: an empty request is refused (400, or 401
 * for a wrong credential) once it is on, and answered 404 while it is off. A running gateway
 * applies `openclaw config set` a moment later (it watches its config), so this is polled.
 */
export function chatEndpointServed(url: string, bearer: string, timeoutMs = 2000): Promise<boolean> {
  return new Promise((resolve) => {
    const headers: Record<string, string> = { 'content-type': 'application/json', 'content-length': '2', ...(bearer ? { authorization: `Bearer ${bearer}` } : {}) };
    const req = request(`${url}/v1/chat/completions`, { method: 'POST', headers, timeout: timeoutMs, agent: false }, (res) => {
      res.resume();
      resolve(res.statusCode !== undefined && res.statusCode !== 404 && res.statusCode < 500);
    });
    req.on('timeout', () => req.destroy());
    req.on('error', () => resolve(false));
    req.end('{}');
  });
}
