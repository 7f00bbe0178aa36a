import type { Service } from './index.js';
import type { Logger } from './log.js';

/**
 * Runs a service as the main thing in this process: listen, say where, and shut down
 * cleanly on SIGINT/SIGTERM. A port that is taken is fatal: the app must never talk
 * to whatever else owns it.
 */
export async function runUntilSignalled(service: Service, log: Logger): Promise<void> {
  try {
    const { url } = await service.listen();
    log.info({ url }, `Space API listening on ${url}`);
  } catch (err) {
    const e = err as NodeJS.ErrnoException;
    const { host, port } = service.ctx.config;
    const why = e.code === 'EADDRINUSE' ? `port ${port} on ${host} is already in use` : e.message;
    log.fatal({ code: e.code }, `cannot listen: ${why}`);
    process.exitCode = 1;
    await service.close();
    return;
  }
  let signalled = false;
  const stop = (signal: NodeJS.Signals): void => {
    if (signalled) return;
    signalled = true;
    log.info({ signal }, 'shutting down');
    service.close().then(
      () => process.exit(0),
      (err: unknown) => {
        log.error({ err: String(err) }, 'shutdown failed');
        process.exit(1);
      },
    );
  };
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
}
