import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { TestResponse } from '../helpers/service.js';
import { openSse } from '../helpers/sse.js';
import { descendants, expectAlive, peakRetained, startAdversary, type TestService } from './harness.js';

/**
 * Every program the service runs, going wrong the same way: 200 MB on stdout and stderr
 * without one newline, then an exit (test/fakes/bin/noeol.mjs). Whoever reads it (an agent
 * CLI's turn, codex's JSON-RPC, the runtimea gateway's log, gh's device login, rclone's
 * authorize) must keep memory bounded, answer a `{detail}` or an agent-error in bounded time,
 * keep GET / fast, and stop the program. Bounded here: what the service keeps at once stays
 * under 80 MB (a line is kept up to 32 MB before it is dropped); a reader that kept the output
 * would keep 200 MB or more.
 */
const NOEOL = path.resolve(import.meta.dirname, '../fakes/bin/noeol.mjs');
const NODE24 = path.resolve(import.meta.dirname, '../fakes/bin/node24');
let svc: TestService | undefined;
afterEach(async () => {
  await svc?.close();
  svc = undefined;
  expect(descendants()).toEqual([]);
});

async function chatTurn(s: TestService, agentName: string): Promise<string[]> {
  const res = await s.post('/api/chat/prompt', { text: 'hello', agent_name: agentName });
  expect(res.status, res.text).toBe(200);
  const sse = await openSse(s.port, `/api/chat/stream/${res.json().stream_id}`);
  await sse.ended;
  return sse.named().map((e) => e.event!);
}

describe('a program that prints 200 MB without a newline', () => {
  const RUNTIMES: Array<[string, string, Record<string, string>]> = [
    ['the clia CLI', 'clia_code', { SPACE_CLIA_BIN: NOEOL }],
    ['codex app-server (clib)', 'clib', { SPACE_CLIB_BIN: NOEOL }],
    ['the runtimea gateway', 'runtimea', { SPACE_RUNTIMEA_BIN: NOEOL, SPACE_RUNTIMEA_NODE: NODE24, SPACE_RUNTIMEA_PORT: '0' }],
  ];
  it.each(RUNTIMES)('as %s: the turn ends with an agent-error in bounded time, memory bounded', async (_name, agentName, env) => {
    svc = await startAdversary({ env });
    let events: string[] = [];
    const growth = await peakRetained(async () => (events = await chatTurn(svc!, agentName)));
    expect(events.at(-1)).toBe('agent-error');
    expect(growth).toBeLessThan(80);
  }, 90_000);

  it('as gh (code-host device login) and rclone (drive authorize): a {detail} in bounded time, memory bounded', async () => {
    svc = await startAdversary({ env: { SPACE_CODEHOST_CLI_BIN: NOEOL, SPACE_SYNC_TOOL_BIN: NOEOL } });
    const answers: TestResponse[] = [];
    const growth = await peakRetained(async () => {
      answers.push(await svc!.post('/api/connectors/codehost/cli/start'));
      answers.push(await svc!.post('/api/connectors/drivea/remotes', { name: 'noeol' }));
    });
    expect(answers[0]!.status).toBeGreaterThanOrEqual(400);
    expect(typeof answers[0]!.json().detail).toBe('string');
    expect(growth).toBeLessThan(80);
    await expectAlive(svc.port);
  }, 120_000);
});
