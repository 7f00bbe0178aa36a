import type { AuthState } from '../auth/state.js';
import { readCodexAuth } from '../bootstrap/codex-auth.js';
import type { Config } from '../config.js';
import type { EnvEntry } from '../stores/env-file.js';
import { RegistryStore } from '../stores/registry.js';
import { maskSecret } from './mask.js';

/** The provider state objects of the spec: booleans and masks, never a secret. */

/** The effective value of each key (the last line of a key wins, as in dotenv). */
export function effectiveEnv(entries: readonly EnvEntry[]): Map<string, string> {
  return new Map(entries.map((e) => [e.key, e.value]));
}

/** GET /api/config/api-key: the first provider's key (PROVA_API_KEY). */
export function apiKeyState(env: Map<string, string>): { provider: string; key_set: boolean; masked: string } {
  const value = env.get('PROVA_API_KEY') ?? '';
  return { provider: 'prova', key_set: value !== '', masked: maskSecret(value) };
}

/**
 * GET /api/config/provb-subscription. The clib device login stores ChatGPT tokens (not an API
 * key) in codex's auth.json, in the CODEX_HOME the service gives codex; the id_token names the
 * plan. Only the plan claim is read.
 */
export async function provbSubscription(codexHome: string): Promise<{ has_subscription: boolean; plan?: string }> {
  const auth = await readCodexAuth(codexHome);
  if (auth?.mode !== 'chatgpt') return { has_subscription: false };
  return auth.plan ? { has_subscription: true, plan: auth.plan } : { has_subscription: true };
}

/** GET /api/config/hosted-account: the upstream sign-in (in memory), or SPACE_API_KEY. */
export function hostedAccount(auth: AuthState): { connected: boolean; account?: { user_id: string } } {
  const state = auth.sanitized();
  if (state.user_id) return { connected: true, account: { user_id: state.user_id } };
  return { connected: state.source !== 'none' };
}

/**
 * GET /api/config/local: whether the active agent's model is served by the local model
 * server (`ollama/<model>` or `localmodel/<model>`).
 */
export async function localState(config: Config): Promise<{ is_local: boolean; provider?: string }> {
  if (!config.activeAgentId) return { is_local: false };
  const agent = await new RegistryStore(config.paths.registryFile).find(config.activeAgentId);
  const model = typeof agent?.model === 'string' ? agent.model : '';
  return /^(ollama|localmodel)\//.test(model) ? { is_local: true, provider: 'localmodel' } : { is_local: false };
}
