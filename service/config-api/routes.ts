import { Router } from 'express';
import { z } from 'zod';
import type { AuthState } from '../auth/state.js';
import type { Core } from '../core.js';
import { activeEnvStore } from '../secrets/active-env.js';
import { RegistryStore } from '../stores/registry.js';
import { aiAuthSnapshot } from './ai-auth.js';
import { probeLocalModel } from './localmodel.js';
import { listModels, loadManifests } from '../runtimes/manifests.js';
import { maskDeep } from './mask.js';
import { providerEnvKey } from './provider-key.js';
import { apiKeyState, effectiveEnv, hostedAccount, localState, provbSubscription } from './provider-state.js';
import { parseBody } from '../http/request-body.js';
import { saveHistorySetting, savedHistorySetting } from '../stores/history-setting.js';

const ProviderKeyBody = z.object({ key: z.string().trim().min(1) });
const HistoryBody = z.looseObject({ enabled: z.boolean() });

/**
 * `enabled`: what this run does; `saved`: the saved choice (null: none); `restart_required`
 * when they differ (kept for clients: the switch takes effect at once, so only a choice
 * saved by another process while this one runs makes it true).
 */
function historyState(running: boolean, saved: boolean | undefined, env: string | undefined): { enabled: boolean; saved: boolean | null; env_override: boolean; restart_required: boolean } {
  const next = env ? running : (saved ?? true);
  return { enabled: running, saved: saved ?? null, env_override: !!env, restart_required: next !== running };
}

/** The history switch of this run (sessions/history-switch.ts; typed here: config-api sits beside sessions/). */
export interface HistoryToggle {
  readonly enabled: boolean;
  set(enabled: boolean): Promise<void>;
}

/** What the config routes read beyond Core: the sign-in state (hosted account, /debug/ai-auth), the history switch. */
export type ConfigDeps = Core & { auth: AuthState; historySwitch: HistoryToggle };

/**
 * /api/config/*, /api/models and /debug/ai-auth. Every body here is safe to show: secrets
 * appear only as booleans or masks (see mask.ts).
 */
export function configRoutes(deps: ConfigDeps): Router {
  const router = Router();
  const { config } = deps;
  const envValues = async (): Promise<Map<string, string>> => effectiveEnv(await (await activeEnvStore(config)).entries());

  router.get('/api/config/workspace', (_req, res) => {
    const roots: Record<string, string> = { runtimea: config.projectsRoot, clia_code: config.projectsRoot };
    roots[config.agentName] = config.projectsRoot;
    res.json({ roots, default: config.agentName });
  });

  // Additive (docs/history.md): whether the user's terminal history is read. Takes effect at
  // once and is saved for the next starts; SPACE_HISTORY, when set, wins (then nothing changes now).
  router.get('/api/config/history', (_req, res) => {
    res.json(historyState(deps.historySwitch.enabled, savedHistorySetting(config.home), config.childEnv.SPACE_HISTORY));
  });
  router.put('/api/config/history', async (req, res) => {
    const { enabled } = parseBody(HistoryBody, req.body, 'Body must be an object with enabled (boolean)');
    await saveHistorySetting(config.home, enabled);
    if (config.childEnv.SPACE_HISTORY === undefined) await deps.historySwitch.set(enabled);
    res.json(historyState(deps.historySwitch.enabled, enabled, config.childEnv.SPACE_HISTORY));
  });

  router.get('/api/models', async (_req, res) => {
    res.json({ models: await listModels(config.paths.manifests) });
  });

  router.get('/api/config/api-key', async (_req, res) => {
    res.json(apiKeyState(await envValues()));
  });

  router.get('/api/config/providers', (_req, res) => void res.json({ providers: [] }));

  router.post('/api/config/providers/:provider_id/key', async (req, res) => {
    const key = providerEnvKey(req.params.provider_id);
    const body = parseBody(ProviderKeyBody, req.body, 'Body must be {key: non-empty string}');
    await (await activeEnvStore(config)).upsert([{ key, value: body.key }]);
    res.json({ ok: true });
  });

  router.get('/api/config/runtimea', async (_req, res) => {
    const registry = await new RegistryStore(config.paths.registryFile).read();
    res.json(maskDeep(registry, [...(await envValues()).values()]));
  });

  router.get('/api/config/provb-subscription', async (_req, res) => {
    res.json(await provbSubscription(config.paths.codexHome));
  });

  router.get('/api/config/hosted-account', (_req, res) => void res.json(hostedAccount(deps.auth)));

  router.get('/api/config/localmodel', async (_req, res) => {
    res.json(await probeLocalModel(config.localModelUrl));
  });

  router.get('/api/config/local', async (_req, res) => {
    res.json(await localState(config));
  });

  router.get('/debug/ai-auth', async (_req, res) => {
    const store = await activeEnvStore(config);
    const env = effectiveEnv(await store.entries());
    res.json(await aiAuthSnapshot(store.file, env, await loadManifests(config.paths.manifests), deps.auth));
  });

  return router;
}
