import { access } from 'node:fs/promises';
import type { AuthState } from '../auth/state.js';
import type { Manifest } from '../runtimes/manifests.js';
import { looksSecret, maskSecret } from './mask.js';

/**
 * GET /debug/ai-auth: which provider credentials the service would hand to each runtime,
 * as booleans and masks. The variables are those the manifests bind, plus any other
 * secret-looking key of the active env file.
 */
export interface AiAuthSnapshot {
  env_file: { path: string; exists: boolean };
  credentials: Array<{ key: string; set: boolean; masked: string }>;
  backends: Record<string, Array<{ from: string; to: string; set: boolean }>>;
  upstream: ReturnType<AuthState['sanitized']>;
}

export async function aiAuthSnapshot(envFile: string, env: Map<string, string>, manifests: readonly Manifest[], auth: AuthState): Promise<AiAuthSnapshot> {
  const bound = manifests.flatMap((m) => Object.keys(m.binding.env));
  const keys = [...new Set([...bound, ...[...env.keys()].filter(looksSecret)])];
  const isSet = (key: string): boolean => (env.get(key) ?? '') !== '';
  return {
    env_file: { path: envFile, exists: await exists(envFile) },
    credentials: keys.map((key) => ({ key, set: isSet(key), masked: maskSecret(env.get(key) ?? '') })),
    backends: Object.fromEntries(
      manifests.map((m) => [m.backend, Object.entries(m.binding.env).map(([from, to]) => ({ from, to, set: isSet(from) }))]),
    ),
    upstream: auth.sanitized(),
  };
}

async function exists(file: string): Promise<boolean> {
  try {
    await access(file);
    return true;
  } catch {
    return false;
  }
}
