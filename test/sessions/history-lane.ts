import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { expect } from 'vitest';
import type { ChatService } from '../helpers/chat.js';
import { eventually } from '../helpers/eventually.js';
import { startService, type TestService } from '../helpers/service.js';
import { runSetup, type Ran } from '../helpers/setups.js';

/** What the real-program history lanes (real-history-*.test.ts) check alike. */

export async function terminalSessions(svc: TestService): Promise<any[]> {
  return (await svc.get('/api/sessions?limit=1000&origin=terminal')).json().sessions;
}

/** Full-text search finds `word` in session `id` (once the index has caught up). */
export async function searchFinds(svc: TestService, word: string, id: string): Promise<void> {
  await eventually(async () => {
    const { hits } = (await svc.get(`/api/fts/search?q=${encodeURIComponent(word)}`)).json();
    expect(hits.map((h: any) => h.session_id)).toContain(id);
  });
}

/** A prompt through the app to terminal session `id`: it runs under that id and ends done. */
export async function promptFromApp(chat: ChatService, id: string, text: string): Promise<void> {
  const { sessionId, sse } = await chat.turn({ text, session_id: id });
  expect(sessionId).toBe(id);
  expect(sse.named().at(-1)).toMatchObject({ event: 'done', data: { finish_reason: 'stop', session_id: id } });
}

/** A program run as the user runs it in a terminal (not through the service): in `cwd`, stdin empty. */
export function inTerminal(command: string, args: readonly string[], env: NodeJS.ProcessEnv, cwd: string): Promise<Ran> {
  return runSetup(command, args, env, '', 120_000, cwd);
}

/**
 * A service on the same home with SPACE_HISTORY=off: it lists no terminal session, and the
 * messages of `id` are only the service's own record of the turns it ran (returned as texts).
 */
export async function textsWithHistoryOff(home: string, env: Record<string, string>, id: string): Promise<string[]> {
  const off = await startService({ home, env: { SPACE_HISTORY: 'off', ...env } });
  try {
    expect((await off.get('/api/sessions?limit=1000&origin=terminal')).json().sessions).toEqual([]);
    const page = await off.get(`/api/messages/${id}?limit=1000`);
    expect(page.status).toBe(200);
    return page.json().messages.map((m: any) => m.text);
  } finally {
    await off.close();
  }
}

/**
 * One request to a fresh `codex app-server` (what the TUI sends, e.g. `thread/name/set` for its
 * `/rename`), as the user's terminal would run it: initialized first, the answer awaited, then
 * the server's input closed and the process awaited.
 */
export async function codexAppServer(codex: string, env: NodeJS.ProcessEnv, cwd: string, method: string, params: unknown): Promise<unknown> {
  const proc = spawn(codex, ['app-server'], { cwd, env, stdio: ['pipe', 'pipe', 'inherit'] });
  const exited = new Promise<void>((resolve) => proc.once('close', () => resolve()));
  const send = (message: object): boolean => proc.stdin.write(`${JSON.stringify({ jsonrpc: '2.0', ...message })}\n`);
  try {
    const answers = createInterface({ input: proc.stdout });
    send({ id: 1, method: 'initialize', params: { clientInfo: { name: 'terminal', title: 'Terminal', version: '0' }, capabilities: null } });
    send({ method: 'initialized' });
    send({ id: 2, method, params });
    for await (const line of answers) {
      const answer = JSON.parse(line) as { id?: number; result?: unknown; error?: { message: string } };
      if (answer.id !== 2) continue;
      if (answer.error) throw new Error(`${method}: ${answer.error.message}`);
      return answer.result;
    }
    throw new Error(`codex app-server ended before answering ${method}`);
  } finally {
    proc.stdin.end();
    const timer = setTimeout(() => proc.kill('SIGKILL'), 10_000);
    await exited;
    clearTimeout(timer);
  }
}
