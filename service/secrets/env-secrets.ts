import { z } from 'zod';
import type { Config } from '../config.js';
import { parseBody } from '../http/request-body.js';
import type { EnvEntry } from '../stores/env-file.js';
import { activeEnvStore } from './active-env.js';

/**
 * Reading and writing the active env file as entries: one implementation for
 * GET/PUT /api/secrets/env and the Electron bridge's secrets calls.
 */
const EnvEntries = z.object({
  entries: z.array(z.object({ key: z.string(), value: z.string() })),
});

export async function readEnvSecrets(config: Config): Promise<{ entries: EnvEntry[] }> {
  return { entries: await (await activeEnvStore(config)).entries() };
}

/** A structured replace (see replaceEnv); 400 for a body that is not `{entries: [...]}`. */
export async function writeEnvSecrets(config: Config, body: unknown): Promise<{ ok: true }> {
  const { entries } = parseBody(EnvEntries, body, 'Body must be {entries: [{key: string, value: string}]}');
  await (await activeEnvStore(config)).replace(entries);
  return { ok: true };
}
