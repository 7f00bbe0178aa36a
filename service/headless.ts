import { ConfigError, loadConfig } from './config.js';
import { createHeadlessHost } from './host.js';
import { createService } from './index.js';
import { createLogger } from './log.js';
import { boundHeapGrowth } from './process/heap.js';
import { runUntilSignalled } from './run.js';

/**
 * `npm start`: the service under plain Node, with no Electron and nobody to confirm. Kept
 * apart from the entry (cli.ts) so the built service is a CommonJS bundle without top-level
 * await, which cached-start.ts compiles with a V8 code cache.
 */
export async function main(): Promise<void> {
  try {
    const config = loadConfig(process.env);
    boundHeapGrowth(config.heapGrowingPercent);
    const log = createLogger(config.logLevel);
    const service = createService({ config, host: createHeadlessHost({ token: config.token }), log });
    await runUntilSignalled(service, log);
  } catch (err) {
    if (!(err instanceof ConfigError)) throw err;
    process.stderr.write(`space: ${err.message}\n`);
    process.exit(2);
  }
}
