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
