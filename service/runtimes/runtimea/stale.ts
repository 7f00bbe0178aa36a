import { readFileSync } from 'node:fs';
import { readFile, rm } from 'node:fs/promises';
import { request } from 'node:http';
import { connect } from 'node:net';
import { stopGroup } from '../../process/supervisor.js';
import { writeFileAtomically } from '../../stores/atomic.js';

/**
 * A gateway left behind by an earlier run of the service (killed with -9, a crash of the
 * host) keeps its port and OpenClaw's state lock. The service records the gateway it starts
 * in ~/.space-state/runtimea-gateway.json; at the next start, a recorded process that is
 * still an OpenClaw gateway is stopped (its whole group). Anything else holding the port is
 * reported, never killed.
 */
export interface GatewayRecord {
  pid: number;
  port: number;
  startedAt: string;
}

export class GatewayPidFile {
  constructor(readonly file: string) {}

  async read(): Promise<GatewayRecord | undefined> {
    try {
      const value = JSON.parse(await readFile(this.file, 'utf8')) as GatewayRecord;
      return Number.isInteger(value.pid) && value.pid > 1 ? value : undefined;
    } catch {
      return undefined;
    }
  }

  write(record: GatewayRecord): Promise<void> {
    return writeFileAtomically(this.file, `${JSON.stringify(record)}\n`, { mode: 0o600, dirMode: 0o700 });
  }

  async remove(): Promise<void> {
    await rm(this.file, { force: true });
  }
}

/**
 * Whether a pid is (still) an OpenClaw gateway: its command line names openclaw and gateway,
 * or is the process title a running 2026.9 gateway gives itself (`openclaw-gateway`).
 */
export function isGatewayProcess(pid: number): boolean {
  try {
    const argv = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0');
    if (/^openclaw-gateway\b/.test(argv[0] ?? '')) return true;
    return argv.some((a) => /openclaw/.test(a)) && argv.includes('gateway');
  } catch {
    return false;
  }
}

/** Stops a stale gateway's process group: SIGTERM, then SIGKILL after `graceMs`. */
export function stopStaleGateway(pid: number, graceMs = 5000): Promise<void> {
  return stopGroup(pid, graceMs);
}

export type PortHolder = 'free' | 'openclaw' | 'other';

/** Who listens on 127.0.0.1:port: nobody, an OpenClaw gateway (its /healthz), or something else. */
export async function probePort(port: number): Promise<PortHolder> {
  const open = await new Promise<boolean>((resolve) => {
    const socket = connect({ host: '127.0.0.1', port });
    socket.setTimeout(1000, () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
  if (!open) return 'free';
  const reply = await getJson(`http://127.0.0.1:${port}/healthz`, 1500);
  return reply?.body?.ok === true && reply.body.status === 'live' ? 'openclaw' : 'other';
}

/** GET a small JSON document: its HTTP status and parsed body (null if not JSON); undefined when nothing answered. */
export function getJson(url: string, timeoutMs: number): Promise<{ status: number; body: any } | undefined> {
  return new Promise((resolve) => {
    const req = request(url, { method: 'GET', timeout: timeoutMs, agent: false }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => {
        if (text.length < 64 * 1024) text += c;
      });
      res.on('end', () => {
        let body: unknown = null;
        try {
          body = JSON.parse(text);
        } catch {
          // not JSON: status only
        }
        resolve({ status: res.statusCode ?? 0, body });
      });
      res.on('error', () => resolve(undefined));
    });
    req.on('timeout', () => req.destroy());
    req.on('error', () => resolve(undefined));
    req.end();
  });
}
