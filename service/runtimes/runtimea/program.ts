import { closeSync, openSync, readSync, realpathSync } from 'node:fs';
import path from 'node:path';
import type { Config } from '../../config.js';
import type { Supervisor } from '../../process/supervisor.js';
import { runToEnd } from '../../process/run.js';
import { which } from '../../process/which.js';

/**
 * How the gateway program is run. OpenClaw needs Node 24+ (2026.9.6: `>=24.16.0 <25 ||
 * >=26.1.0`); the service runs on Node 20, so it finds a suitable Node separately, in order:
 *   1. SPACE_RUNTIMEA_NODE (must be 24+),
 *   2. `node` on PATH, if it is 24+,
 *   3. the Node running the service, if it is 24+ (never Electron's binary).
 * The OpenClaw entry is SPACE_RUNTIMEA_BIN (default `openclaw` on PATH), followed through
 * symlinks to its `openclaw.mjs` and run as `<node> openclaw.mjs ...`, so its own
 * `#!/usr/bin/env node` never picks an older Node. Node's folder is also put first on the
 * gateway's PATH, for the tools it starts.
 */
export class GatewayProgramError extends Error {}

export interface GatewayProgram {
  node: string;
  nodeVersion: string;
  /** Program and leading arguments: [node, openclaw.mjs] or [openclaw]. */
  command: string;
  prefix: string[];
}

export const MIN_NODE_MAJOR = 24;

export async function findGatewayProgram(config: Config, supervisor: Supervisor, env: NodeJS.ProcessEnv): Promise<GatewayProgram> {
  const node = await findNode(config, supervisor, env);
  const found = which(config.bins.runtimea, env.PATH ?? '');
  if (!found) {
    throw new GatewayProgramError(`The OpenClaw CLI was not found ('${config.bins.runtimea}'). Install it (npm install -g openclaw@2026.9.6, on Node 24) or set SPACE_RUNTIMEA_BIN to its openclaw.mjs.`);
  }
  const entry = realpathSync(found);
  return isNodeScript(entry) ? { ...node, command: node.node, prefix: [entry] } : { ...node, command: entry, prefix: [] };
}

async function findNode(config: Config, supervisor: Supervisor, env: NodeJS.ProcessEnv): Promise<{ node: string; nodeVersion: string }> {
  if (config.runtimea.node) {
    const version = await nodeVersion(config.runtimea.node, supervisor, env);
    if (!version) throw new GatewayProgramError(`SPACE_RUNTIMEA_NODE (${config.runtimea.node}) is not a Node binary that runs.`);
    if (major(version) < MIN_NODE_MAJOR) throw new GatewayProgramError(`SPACE_RUNTIMEA_NODE is Node ${version}; the OpenClaw gateway needs Node ${MIN_NODE_MAJOR} or newer.`);
    return { node: config.runtimea.node, nodeVersion: version };
  }
  const seen: string[] = [];
  const candidates = new Set([which('node', env.PATH ?? ''), process.versions.electron ? null : process.execPath]);
  for (const candidate of candidates) {
    if (!candidate) continue;
    const version = await nodeVersion(candidate, supervisor, env);
    if (version && major(version) >= MIN_NODE_MAJOR) return { node: candidate, nodeVersion: version };
    seen.push(`${candidate} (${version ?? 'does not run'})`);
  }
  throw new GatewayProgramError(
    `The OpenClaw gateway needs Node ${MIN_NODE_MAJOR} or newer, and none was found (tried ${seen.join(', ') || 'nothing: no node on PATH'}). Install Node 24 (for example \`npm install node@24\` in any folder gives node_modules/.bin/node) and set SPACE_RUNTIMEA_NODE to it.`,
  );
}

/**
 * `node --version` through the supervisor (every child goes through it); undefined if it
 * fails. runToEnd waits for stdout to close as well as for the exit: the exit event can come
 * before the output is read (seen on a loaded machine as "not a Node binary that runs").
 */
async function nodeVersion(node: string, supervisor: Supervisor, env: NodeJS.ProcessEnv): Promise<string | undefined> {
  let run;
  try {
    run = await runToEnd(supervisor, { command: node, args: ['--version'], env, timeoutMs: 5000, maxStdout: 1024 });
  } catch {
    return undefined;
  }
  const version = run.stdout.trim();
  return run.code === 0 && /^v\d+\.\d+\.\d+/.test(version) ? version : undefined;
}

function major(version: string): number {
  return Number(/^v(\d+)/.exec(version)?.[1] ?? 0);
}

/** A JavaScript file (by extension or a node shebang) rather than a native program. */
function isNodeScript(file: string): boolean {
  if (/\.(mjs|cjs|js)$/.test(file)) return true;
  let fd: number | undefined;
  try {
    fd = openSync(file, 'r');
    const head = Buffer.alloc(128);
    const n = readSync(fd, head, 0, head.length, 0);
    const firstLine = head.subarray(0, n).toString('utf8').split('\n')[0]!;
    return firstLine.startsWith('#!') && /\bnode\b/.test(firstLine);
  } catch {
    return false;
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}

/** The gateway's PATH: the chosen Node's folder first. */
export function pathWithNode(node: string, current: string | undefined): string {
  return [path.dirname(node), ...(current ? [current] : [])].join(path.delimiter);
}
