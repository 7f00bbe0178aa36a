import path from 'node:path';
import type { Config } from '../config.js';
import { HttpError } from '../errors.js';
import { EnvFileStore } from '../stores/env-file.js';
import { RegistryStore } from '../stores/registry.js';

/**
 * The active agent env file. The active agent is the registry agent whose id is
 * SPACE_ACTIVE_AGENT; when that agent has an `env_file`, that file is active. In every
 * other case (variable unset, agent absent, no `env_file`) it is ~/.runtimea/.env.
 * Resolved per request, so a PATCH of the agent's `env_file` applies at once.
 */
export async function activeEnvFile(config: Config): Promise<string> {
  if (!config.activeAgentId) return config.paths.defaultEnvFile;
  const agent = await new RegistryStore(config.paths.registryFile).find(config.activeAgentId);
  const envFile = agent?.env_file;
  if (envFile === undefined || envFile === null || envFile === '') return config.paths.defaultEnvFile;
  return checkedEnvFile(envFile, config.home);
}

export async function activeEnvStore(config: Config): Promise<EnvFileStore> {
  const file = await activeEnvFile(config);
  return new EnvFileStore(file, { ownsDirectory: path.dirname(file) === config.paths.runtimeaDir });
}

/**
 * A registry field must not turn the secrets endpoints into a writer of arbitrary files:
 * the path must be absolute, under $HOME, and name an env file (`.env`, `x.env`, `.env.x`).
 */
function checkedEnvFile(value: unknown, home: string): string {
  const file = typeof value === 'string' && path.isAbsolute(value) ? path.resolve(value) : undefined;
  const inHome = file !== undefined && file.startsWith(home + path.sep);
  const name = file ? path.basename(file) : '';
  if (!file || !inHome || !/(^\.env(\..+)?$)|(\.env$)/.test(name)) {
    throw new HttpError(500, 'The active agent env_file must be an absolute path under $HOME naming an env file (.env, <name>.env, .env.<name>)');
  }
  return file;
}
