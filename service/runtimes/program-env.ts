import type { Config } from '../config.js';
import { activeEnvFile } from '../secrets/active-env.js';
import { childEnv, readEnvValues, type Binding } from './binding.js';

/**
 * The environment of a runtime's program, as binding.ts builds it (the service's environment
 * without its secrets, HOME, the manifest's defaults, the active env file's credentials under
 * the names the program reads), read fresh for each start so a key saved a moment ago is used.
 */
export async function programEnv(config: Config, binding: Binding): Promise<NodeJS.ProcessEnv> {
  return childEnv(binding, config.childEnv, await readEnvValues(await activeEnvFile(config)));
}
