import type { Config } from '../config.js';
import { activeEnvStore } from '../secrets/active-env.js';

/**
 * The environment of a runtime's real program: the service's own environment (PATH, proxies,
 * locale, OPENCLAW_* pass through) without the service's own SPACE_* settings (the upstream
 * key and the launch token must not reach an agent whose tools can read its environment),
 * HOME as the service resolved it, the manifest's fixed defaults, and each credential of the
 * active env file under the name the program reads (manifest `env`: PROVB_API_KEY ->
 * CODEX_API_KEY, ...). Empty values are not passed; a value in the env file wins over the
 * same variable inherited from the service.
 */
export interface EnvBinding {
  env: Record<string, string>;
  env_defaults: Record<string, string>;
}

export async function programEnv(config: Config, binding: EnvBinding, base: NodeJS.ProcessEnv = process.env): Promise<NodeJS.ProcessEnv> {
  const entries = await (await activeEnvStore(config)).entries();
  const fromFile: Record<string, string> = {};
  for (const { key, value } of entries) {
    const target = Object.hasOwn(binding.env, key) ? binding.env[key] : undefined;
    if (target && value) fromFile[target] = value;
  }
  const inherited = Object.fromEntries(Object.entries(base).filter(([key]) => !key.startsWith('SPACE_')));
  return { ...inherited, HOME: config.home, ...binding.env_defaults, ...fromFile };
}
