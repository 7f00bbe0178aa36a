import path from 'node:path';
import type { Env } from '../../service/config.js';
import { startChat, type ChatService } from '../helpers/chat.js';
import type { TestResponse } from '../helpers/service.js';
import type { SseConnection } from '../helpers/sse.js';
import { MISSING_BINS } from './harness.js';

/**
 * A chat service (test/helpers/chat.ts) whose clia program is the hostile double
 * (test/fakes/bin/hostile-claude.mjs): the prompt text picks how it misbehaves. Every other
 * program is absent, as in the rest of the adversarial suite.
 */
export const HOSTILE_CLAUDE = path.resolve(import.meta.dirname, '../fakes/bin/hostile-claude.mjs');

export interface HostileService extends Omit<ChatService, 'prompt'> {
  /** POST /api/chat/prompt on clia_code. */
  prompt(text: string, extra?: Record<string, unknown>): Promise<TestResponse>;
  /** prompt + open its stream (not waiting for the end). */
  open(text: string, extra?: Record<string, unknown>): Promise<{ streamId: string; sessionId: string | null; sse: SseConnection }>;
}

export async function startHostile(env: Env = {}): Promise<HostileService> {
  const chat = await startChat({ ...MISSING_BINS, SPACE_CLIA_BIN: HOSTILE_CLAUDE, ...env });
  const prompt = (text: string, extra: Record<string, unknown> = {}): Promise<TestResponse> => chat.prompt({ text, agent_name: 'clia_code', ...extra });
  return {
    ...chat,
    prompt,
    open: async (text, extra) => {
      const res = await prompt(text, extra);
      if (res.status !== 200) throw new Error(`prompt answered ${res.status}: ${res.text}`);
      const { stream_id: streamId, session_id: sessionId } = res.json();
      return { streamId, sessionId, sse: await chat.stream(streamId) };
    },
  };
}
