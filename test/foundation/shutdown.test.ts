import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { get } from 'node:http';
import { createServer } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { livePidsInGroup } from '../../service/process/supervisor.js';
import { send } from '../helpers/service.js';

const root = path.resolve(import.meta.dirname, '../..');
let proc: ChildProcess | undefined;
let home: string | undefined;
afterEach(async () => {
  if (proc && proc.exitCode === null) proc.kill('SIGKILL');
  if (home) await rm(home, { recursive: true, force: true });
});

/** Starts a TS entry as a real process and waits for its "listening" line. */
async function startProcess(entry: string, env: Record<string, string>): Promise<{ port: number; output: () => string }> {
  home = await mkdtemp(path.join(os.tmpdir(), 'space-proc-'));
  proc = spawn(process.execPath, ['--import', 'tsx', entry], { cwd: root, env: { PATH: process.env.PATH!, HOME: home, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  proc.stdout!.on('data', (c: Buffer) => (out += c));
  proc.stderr!.on('data', (c: Buffer) => (out += c));
  const port = await new Promise<number>((resolve, reject) => {
    const check = (): void => {
      const m = /listening on http:\/\/127\.0\.0\.1:(\d+)/.exec(out);
      if (m) resolve(Number(m[1]));
    };
    proc!.stdout!.on('data', check);
    proc!.once('exit', (code) => reject(new Error(`exited ${code}: ${out}`)));
  });
  return { port, output: () => out };
}

function exitOf(child: ChildProcess): Promise<number | null> {
  return child.exitCode !== null ? Promise.resolve(child.exitCode) : new Promise((r) => child.once('exit', (code) => r(code)));
}

describe('graceful shutdown of a real service process', () => {
  it('SIGTERM ends open SSE streams cleanly and leaves no process of any child group behind', async () => {
    const { port } = await startProcess('test/fixtures/service-with-children.ts', { SPACE_PORT: '0' });
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

    proc!.kill('SIGTERM');
    expect(await sse.ended).toBe('end');
    expect(await exitOf(proc!)).toBe(0);
    expect(livePidsInGroup(pid)).toEqual([]);
  });

  it('a taken port is fatal: non-zero exit, a clear message, no fallback', async () => {
    const blocker = createServer();
    await new Promise<void>((r) => blocker.listen(0, '127.0.0.1', r));
    const port = (blocker.address() as { port: number }).port;
    try {
      home = await mkdtemp(path.join(os.tmpdir(), 'space-proc-'));
      proc = spawn(process.execPath, ['--import', 'tsx', 'service/cli.ts'], { cwd: root, env: { PATH: process.env.PATH!, HOME: home, SPACE_PORT: String(port) }, stdio: ['ignore', 'pipe', 'pipe'] });
      let out = '';
      proc.stdout!.on('data', (c: Buffer) => (out += c));
      expect(await exitOf(proc)).toBe(1);
      expect(out).toContain(`port ${port} on 127.0.0.1 is already in use`);
      expect(out).not.toContain('listening on');
    } finally {
      blocker.close();
    }
  });

  it('a non-loopback SPACE_HOST is refused at start-up', async () => {
    home = await mkdtemp(path.join(os.tmpdir(), 'space-proc-'));
    proc = spawn(process.execPath, ['--import', 'tsx', 'service/cli.ts'], { cwd: root, env: { PATH: process.env.PATH!, HOME: home, SPACE_HOST: '0.0.0.0' }, stdio: ['ignore', 'pipe', 'pipe'] });
    let err = '';
    proc.stderr!.on('data', (c: Buffer) => (err += c));
    expect(await exitOf(proc)).toBe(2);
    expect(err).toContain('SPACE_HOST must be a loopback address');
  });
});
