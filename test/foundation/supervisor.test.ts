import { existsSync, readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ChildRecords } from '../../service/process/child-records.js';
import { createLogger } from '../../service/log.js';
import { livePidsInGroup, Supervisor } from '../../service/process/supervisor.js';

const log = createLogger('silent');
const env = { PATH: process.env.PATH };

describe('process supervisor', () => {
  it('a program that does not exist rejects with ENOENT and owns nothing', async () => {
    const sup = new Supervisor(log);
    await expect(sup.spawn({ command: 'no-such-binary-xyz', args: [], env })).rejects.toMatchObject({ code: 'ENOENT' });
    expect(sup.size).toBe(0);
  });

  it('never goes through a shell: arguments are data', async () => {
    const sup = new Supervisor(log);
    const child = await sup.spawn({ command: 'echo', args: ['$(id)', '; rm -rf ~'], env });
    let out = '';
    child.child.stdout!.on('data', (c: Buffer) => (out += c));
    await new Promise((r) => child.child.stdout!.once('end', r));
    expect(out).toBe('$(id) ; rm -rf ~\n');
  });

  it('each child leads its own process group, and stop kills the whole group', async () => {
    const sup = new Supervisor(log);
    const child = await sup.spawn({ command: 'sh', args: ['-c', 'sleep 300 & sleep 300 & wait'], env, stdio: 'ignore' });
    expect(child.pid).not.toBe(process.pid);
    await expect.poll(() => livePidsInGroup(child.pid).length).toBe(3);
    expect(livePidsInGroup(process.pid)).not.toContain(child.pid);
    await child.stop(1000);
    expect(livePidsInGroup(child.pid)).toEqual([]);
    expect(sup.size).toBe(0);
  });

  it('escalates to SIGKILL when the group ignores SIGTERM', async () => {
    const sup = new Supervisor(log);
    const child = await sup.spawn({ command: 'sh', args: ['-c', "trap '' TERM; sleep 300 & wait; wait"], env, stdio: 'ignore' });
    await expect.poll(() => livePidsInGroup(child.pid).length).toBe(2);
    await sup.stopAll(200);
    expect(livePidsInGroup(child.pid)).toEqual([]);
    expect((await child.exited).signal).toBe('SIGKILL');
  });

  it('a grandchild left behind by an exited leader stays owned until stopped', async () => {
    const sup = new Supervisor(log);
    const child = await sup.spawn({ command: 'sh', args: ['-c', 'sleep 300 &'], env, stdio: 'ignore' });
    await child.exited;
    await expect.poll(() => livePidsInGroup(child.pid).length).toBe(1);
    expect(sup.size).toBe(1);
    await sup.stopAll(500);
    expect(livePidsInGroup(child.pid)).toEqual([]);
    expect(sup.size).toBe(0);
  });

  it('a pty child is a real terminal, owned, and stopped with its whole group', async () => {
    const sup = new Supervisor(log);
    const owned = sup.spawnPty({ command: 'sh', args: ['-c', 'tty; sleep 300 & read line; echo "got $line"; wait'], env });
    let screen = '';
    owned.pty.onData((d) => (screen += d));
    await expect.poll(() => screen).toMatch(/\/dev\/pts\/\d+/);
    await expect.poll(() => livePidsInGroup(owned.pid).length).toBe(2);
    owned.pty.write('hello\r');
    await expect.poll(() => screen).toContain('got hello');
    expect(sup.size).toBe(1);
    await sup.stopAll(500);
    expect(livePidsInGroup(owned.pid)).toEqual([]);
    expect(sup.size).toBe(0);
    expect((await owned.exited).signal).toMatch(/SIGTERM|SIGHUP/);
  });

  it('a pty program that does not exist throws ENOENT and owns nothing', () => {
    const sup = new Supervisor(log);
    expect(() => sup.spawnPty({ command: 'no-such-binary-xyz', args: [], env })).toThrow(expect.objectContaining({ code: 'ENOENT' }));
    expect(sup.size).toBe(0);
  });

  // A kill -9 can land at any instant after the fork: the group must be on disk before any
  // other code runs, or no later start would know to stop it.
  it.runIf(process.platform === 'linux')('a child is on record in the same turn as its fork, and off it once stopped', async () => {
    const dir = await mkdtemp(path.join(os.tmpdir(), 'space-children-'));
    const file = path.join(dir, 'state', 'children.json');
    try {
      const sup = new Supervisor(log, new ChildRecords(file, log));
      const starting = sup.spawn({ command: 'sleep', args: ['300'], env });
      const recorded = JSON.parse(readFileSync(file, 'utf8')) as Array<{ pgid: number }>;
      const owned = await starting;
      expect(recorded.map((r) => r.pgid)).toEqual([owned.pid]);
      await sup.stopAll(500);
      expect(JSON.parse(readFileSync(file, 'utf8'))).toEqual([]);
      await expect(sup.spawn({ command: 'no-such-binary-xyz', args: [], env })).rejects.toMatchObject({ code: 'ENOENT' });
      expect(JSON.parse(readFileSync(file, 'utf8'))).toEqual([]);
      expect(existsSync(file)).toBe(true);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
