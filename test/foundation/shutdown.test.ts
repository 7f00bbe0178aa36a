import { spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { get } from 'node:http';
import { createServer } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { livePidsInGroup } from '../../service/process/supervisor.js';
import { startChildService, type ChildService } from '../helpers/child-service.js';
import { send } from '../helpers/service.js';

const root = path.resolve(import.meta.dirname, '../..');
let home: string;
let running: ChildService | undefined;
beforeEach(async () => {
  home = await mkdtemp(path.join(os.tmpdir(), 'space-proc-'));
});
afterEach(async () => {
  await running?.stop();
  running = undefined;
  await rm(home, { recursive: true, force: true });
});

/** Runs the headless entry to its end (it must not start listening). */
async function runToExit(env: Record<string, string>): Promise<{ code: number | null; out: string }> {
  const proc = spawn(process.execPath, ['--import', 'tsx', 'service/cli.ts'], { cwd: root, env: { PATH: process.env.PATH!, HOME: home, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  proc.stdout!.on('data', (c: Buffer) => (out += c));
  proc.stderr!.on('data', (c: Buffer) => (out += c));
  const code = await new Promise<number | null>((r) => proc.once('exit', r));
  return { code, out };
}

describe('graceful shutdown of a real service process', () => {
  it('SIGTERM ends open SSE streams cleanly and leaves no process of any child group behind', async () => {
    running = await startChildService({ home, entry: 'test/fixtures/service-with-children.ts' });
    const { port } = running;
    const { pid } = (await send(port, 'POST', '/test/spawn')).json();
    await expect.poll(() => livePidsInGroup(pid).length).toBe(3);

    const sse = await new Promise<{ text: () => string; ended: Promise<'end' | 'error'> }>((resolve) => {
      get({ host: '127.0.0.1', port, path: '/test/sse' }, (res) => {
        expect(res.headers['content-type']).toBe('text/event-stream');
        let text = '';
        res.on('data', (c: Buffer) => (text += c));
        const ended = new Promise<'end' | 'error'>((r) => {
          res.once('end', () => r('end'));
          res.once('error', () => r('error'));
        });
        resolve({ text: () => text, ended });
      });
    });
    await expect.poll(() => sse.text()).toContain('event: heartbeat');
    expect(sse.text()).toContain('event: hello\ndata: {"n":1}\n\n');

    process.kill(running.pid, 'SIGTERM');
    expect(await sse.ended).toBe('end');
    expect(await running.exited).toBe(0);
    expect(livePidsInGroup(pid)).toEqual([]);
  });

  it('a taken port is fatal: non-zero exit, a clear message, no fallback', async () => {
    const blocker = createServer();
    await new Promise<void>((r) => blocker.listen(0, '127.0.0.1', r));
    const port = (blocker.address() as { port: number }).port;
    try {
      const { code, out } = await runToExit({ SPACE_PORT: String(port) });
      expect(code).toBe(1);
      expect(out).toContain(`port ${port} on 127.0.0.1 is already in use`);
      expect(out).not.toContain('listening on');
    } finally {
      blocker.close();
    }
  });

  it('a non-loopback SPACE_HOST is refused at start-up', async () => {
    const { code, out } = await runToExit({ SPACE_HOST: '0.0.0.0' });
    expect(code).toBe(2);
    expect(out).toContain('SPACE_HOST must be a loopback address');
  });
});
