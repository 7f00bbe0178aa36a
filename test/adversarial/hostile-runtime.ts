import { existsSync, readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { Env } from '../../service/config.js';
import type { TestResponse } from '../helpers/service.js';
import { openSse, type SseConnection } from '../helpers/sse.js';
import { startAdversary, type TestService } from './harness.js';

/**
 * A service whose clia program is the hostile double (test/fakes/bin/hostile-claude.mjs):
 * the prompt text picks how it misbehaves. Timings are shortened so faults show quickly.
 */
export const HOSTILE_CLAUDE = path.resolve(import.meta.dirname, '../fakes/bin/hostile-claude.mjs');

export interface HostileService extends TestService {
  prompt(text: string, extra?: Record<string, unknown>): Promise<TestResponse>;
  /** prompt + open its stream (not waiting for the end). */
  open(text: string, extra?: Record<string, unknown>): Promise<{ streamId: string; sessionId: string | null; sse: SseConnection }>;
  stream(streamId: string, headers?: Record<string, string>): Promise<SseConnection>;
  /** Every run of the double so far: its pid (= its process group) and argv. */
  runs(): Array<{ pid: number; argv: string[]; cwd: string; env: Record<string, string> }>;
}

export async function startHostile(env: Env = {}): Promise<HostileService> {
  const home = await mkdtemp(path.join(os.tmpdir(), 'space-hostile-'));
  const log = path.join(home, 'hostile-claude.log');
  const svc = await startAdversary({
    home,
    env: {
      SPACE_CLIA_BIN: HOSTILE_CLAUDE,
      HOSTILE_LOG: log,
      SPACE_CHAT_HEARTBEAT_CLI_MS: '300',
      SPACE_CHAT_ABORT_GRACE_MS: '300',
      ...env,
    },
  });
  const prompt = (text: string, extra: Record<string, unknown> = {}): Promise<TestResponse> => svc.post('/api/chat/prompt', { text, agent_name: 'clia_code', ...extra });
  const stream = (streamId: string, headers: Record<string, string> = {}): Promise<SseConnection> => openSse(svc.port, `/api/chat/stream/${streamId}`, headers);
  return {
    ...svc,
    close: async () => {
      await svc.close();
      await rm(home, { recursive: true, force: true });
    },
    prompt,
    stream,
    open: async (text, extra) => {
      const res = await prompt(text, extra);
      if (res.status !== 200) throw new Error(`prompt answered ${res.status}: ${res.text}`);
      const { stream_id: streamId, session_id: sessionId } = res.json();
      return { streamId, sessionId, sse: await stream(streamId) };
    },
    runs: () =>
      existsSync(log)
        ? readFileSync(log, 'utf8')
            .split('\n')
            .filter(Boolean)
            .map((l) => JSON.parse(l))
        : [],
  };
}
