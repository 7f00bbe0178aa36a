import { afterEach, describe, expect, it } from 'vitest';
import { closeServiceBeforeQuit } from '../../main/quit.js';
import { bringToFront, claimSingleInstance, type FocusableWindow } from '../../main/single-instance.js';
import { livePidsInGroup } from '../../service/process/supervisor.js';
import { startChat, type ChatService } from '../helpers/chat.js';
import { send } from '../helpers/service.js';

/**
 * The app's own lifecycle with Electron's `app` faked (its binary cannot run here): one
 * instance, and a quit that waits for the real in-process service to close.
 */
function fakeApp(options: { lock?: boolean } = {}) {
  const listeners = new Map<string, Array<(...args: any[]) => void>>();
  const calls: string[] = [];
  const app = {
    requestSingleInstanceLock: () => options.lock ?? true,
    on: (name: string, fn: (...args: any[]) => void) => {
      listeners.set(name, [...(listeners.get(name) ?? []), fn]);
      return app;
    },
    quit: () => void calls.push('quit'),
    exit: (code: number) => void calls.push(`exit ${code}`),
  };
  const emit = (name: string, ...args: unknown[]) => (listeners.get(name) ?? []).forEach((fn) => fn(...args));
  /** A before-quit event: whether the handler held it. */
  const beforeQuit = (): boolean => {
    let held = false;
    emit('before-quit', { preventDefault: () => (held = true) });
    return held;
  };
  return { app: app as never, calls, emit, beforeQuit, listeners };
}

function fakeWindow(state: { minimized?: boolean; visible?: boolean } = {}) {
  const calls: string[] = [];
  const win: FocusableWindow = {
    isMinimized: () => state.minimized ?? false,
    isVisible: () => state.visible ?? true,
    restore: () => void calls.push('restore'),
    show: () => void calls.push('show'),
    focus: () => void calls.push('focus'),
  };
  return { win, calls };
}

describe('single instance', () => {
  it('the first launch takes the lock; a second launch focuses its window', () => {
    const fake = fakeApp();
    const { win, calls } = fakeWindow({ minimized: true, visible: false });
    expect(claimSingleInstance(fake.app, () => win)).toBe(true);
    expect(fake.calls).toEqual([]);
    fake.emit('second-instance', {}, ['space'], '/');
    expect(calls).toEqual(['restore', 'show', 'focus']);
  });

  it('a launch without the lock quits at once and registers nothing', () => {
    const fake = fakeApp({ lock: false });
    expect(claimSingleInstance(fake.app, () => undefined)).toBe(false);
    expect(fake.calls).toEqual(['quit']);
    expect([...fake.listeners.keys()]).toEqual([]);
  });

  it('a second launch while the first is still starting (no window yet) is harmless', () => {
    const fake = fakeApp();
    claimSingleInstance(fake.app, () => undefined);
    expect(() => fake.emit('second-instance', {}, [], '/')).not.toThrow();
    const { win, calls } = fakeWindow();
    bringToFront(win);
    expect(calls).toEqual(['focus']);
  });
});

describe('quit', () => {
  let chat: ChatService | undefined;
  afterEach(async () => {
    await chat?.close();
    chat = undefined;
  });

  it('holds the quit until the service has closed: turn aborted, its process group gone, port closed', async () => {
    chat = await startChat();
    const { stream_id } = (await chat.prompt({ text: 'slow please', agent_name: 'clia_code' })).json();
    const sse = await chat.stream(stream_id);
    await sse.waitFor((e) => e.event === 'text-delta');
    const pid = chat.runs()[0]!.pid;
    expect(livePidsInGroup(pid).length).toBeGreaterThan(1);

    const fake = fakeApp();
    const svc = chat.service;
    closeServiceBeforeQuit(fake.app, () => svc);
    expect(fake.beforeQuit()).toBe(true);
    // A second quit while closing is held too, and does not close twice.
    expect(fake.beforeQuit()).toBe(true);
    expect(fake.calls).toEqual([]);
    await expect.poll(() => fake.calls, { timeout: 10_000 }).toEqual(['quit']);

    await sse.ended;
    expect(sse.named().at(-1)).toMatchObject({ event: 'done', data: { finish_reason: 'aborted' } });
    expect(livePidsInGroup(pid)).toEqual([]);
    await expect(send(chat.port, 'GET', '/')).rejects.toThrow(/ECONNREFUSED/);
    // The quit it re-issues goes through.
    expect(fake.beforeQuit()).toBe(false);
  });

  it('quits at once when no service was started', () => {
    const fake = fakeApp();
    closeServiceBeforeQuit(fake.app, () => undefined);
    expect(fake.beforeQuit()).toBe(false);
  });

  it('a close that hangs ends in exit after the timeout', async () => {
    const fake = fakeApp();
    const logged: string[] = [];
    closeServiceBeforeQuit(fake.app, () => ({ close: () => new Promise<void>(() => undefined) }), { timeoutMs: 50, log: (m) => void logged.push(m) });
    expect(fake.beforeQuit()).toBe(true);
    await expect.poll(() => fake.calls).toEqual(['exit 0']);
    expect(logged).toEqual(['the service did not close within 50 ms; exiting']);
  });
});
