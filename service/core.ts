import type { Config } from './config.js';
import type { Host } from './host.js';
import type { Logger } from './log.js';
import type { Supervisor } from './process/supervisor.js';

/**
 * What every feature may read: the frozen configuration, the logger, the embedding host and
 * the supervisor that owns every subprocess. A feature names what else it reads in its own
 * folder (`Core & { ... }`); the composition root hands each one what it names.
 */
export interface Core {
  readonly config: Config;
  readonly log: Logger;
  readonly host: Host;
  readonly supervisor: Supervisor;
}

/** The service's lifecycle stage, shown by /health. */
export type Stage = 'starting' | 'ready' | 'stopping';
