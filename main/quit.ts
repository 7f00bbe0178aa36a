import type { App } from 'electron';
import type { Service } from '../service/index.js';

export interface QuitOptions {
  /** Longest wait for the service to close before the app exits anyway. */
  timeoutMs?: number;
  log?: (message: string) => void;
}

/**
 * Holds every quit (window closed, menu, relaunch, quitAndInstall) until the service has
 * closed: running turns aborted, every child process group stopped (the runtimea gateway
 * included), open streams ended, writes flushed. Then quits for real. A close that hangs
 * past the timeout exits the app anyway so it never stays half-alive.
 */
export function closeServiceBeforeQuit(app: Pick<App, 'on' | 'quit' | 'exit'>, service: () => Pick<Service, 'close'> | undefined, options: QuitOptions = {}): void {
  const timeoutMs = options.timeoutMs ?? 15_000;
  let state: 'running' | 'closing' | 'closed' = 'running';
  app.on('before-quit', (event) => {
    const current = service();
    if (state === 'closed' || !current) return;
    event.preventDefault();
    if (state === 'closing') return;
    state = 'closing';
    const timer = setTimeout(() => {
      options.log?.(`the service did not close within ${timeoutMs} ms; exiting`);
      app.exit(0);
    }, timeoutMs);
    void current
      .close()
      .catch((err: unknown) => options.log?.(`closing the service failed: ${String(err)}`))
      .finally(() => {
        clearTimeout(timer);
        state = 'closed';
        app.quit();
      });
  });
}
