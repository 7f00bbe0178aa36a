import { existsSync, readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { Env } from '../../service/config.js';
import { startService, type TestResponse, type TestService } from './service.js';
import { openSse, type SseConnection } from './sse.js';

/** The CLI double that replays the recorded claude stdout. */
export const CLAUDE_DOUBLE = path.resolve(import.meta.dirname, '../fakes/bin/claude.mjs');
const fixtures = path.resolve(import.meta.dirname, '../fixtures/clia/runs');

export interface ChatService extends TestService {
  prompt(body: Record<string, unknown>): Promise<TestResponse>;
  stream(streamId: string, headers?: Record<string, string>): Promise<SseConnection>;
  /** prompt + stream to the end; fails on a non-200 prompt. */
  turn(body: Record<string, unknown>): Promise<{ streamId: string; sessionId: string | null; sse: SseConnection }>;
  /** What the double logged, one record per run. */
  runs(): Array<{ argv: string[]; cwd: string; pid: number; stdinNull: boolean; stdinPrompt?: string; env: Record<string, string | null> }>;
}

/** A real service whose clia binary is the double; timings shortened through the chat env vars. */
export async function startChat(env: Env = {}): Promise<ChatService> {
  const home = await mkdtemp(path.join(os.tmpdir(), 'space-chat-'));
  const log = path.join(home, 'claude-double.log');
  const svc = await startService({
    home,
    env: {
      SPACE_CLIA_BIN: CLAUDE_DOUBLE,
      FAKE_CLAUDE_LOG: log,
      SPACE_CHAT_HEARTBEAT_CLI_MS: '300',
      SPACE_CHAT_ABORT_GRACE_MS: '300',
      ...env,
    },
  });
  const prompt = (body: Record<string, unknown>): Promise<TestResponse> => svc.post('/api/chat/prompt', body);
  const stream = (streamId: string, headers: Record<string, string> = {}): Promise<SseConnection> => openSse(svc.port, `/api/chat/stream/${streamId}`, headers);
  return {
    ...svc,
    prompt,
    stream,
    turn: async (body) => {
      const res = await prompt(body);
      if (res.status !== 200) throw new Error(`prompt answered ${res.status}: ${res.text}`);
      const { stream_id: streamId, session_id: sessionId } = res.json();
      const sse = await stream(streamId);
      await sse.ended;
      return { streamId, sessionId, sse };
    },
    runs: () =>
      existsSync(log)
        ? readFileSync(log, 'utf8')
            .split('\n')
            .filter(Boolean)
            .map((l) => JSON.parse(l))
        : [],
    close: async () => {
      await svc.close();
      await rm(home, { recursive: true, force: true });
    },
  };
}

/** The concatenated text_delta texts of a recorded run, read from the fixture itself. */
export function recordedText(run: string): string {
  return readFileSync(path.join(fixtures, `${run}.stdout.jsonl`), 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l))
    .filter((o) => o.type === 'stream_event' && o.event.delta?.type === 'text_delta')
    .map((o) => o.event.delta.text)
    .join('');
}

/** How the double was called: the session flag and id, and the prompt (the stream-json message on stdin, else the positional after `--`). */
export function callOf(run: { argv: string[]; stdinPrompt?: string }): { session: string[]; prompt: string | undefined } {
  const end = run.argv.indexOf('--');
  return { session: run.argv.slice(1, 3), prompt: run.stdinPrompt ?? (end === -1 ? undefined : run.argv.slice(end + 1).join(' ')) };
}

export function textOf(sse: SseConnection): string {
  return sse.events.filter((e) => e.event === 'text-delta').map((e) => e.data.text).join('');
}
