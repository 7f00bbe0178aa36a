import { Router } from 'express';
import type { Core } from '../core.js';
import type { LifecycleAction } from '../host.js';
import { LifecycleRequests } from './confirm.js';

/**
 * What the lifecycle routes read beyond Core: how to restart the runtimea gateway. The
 * assembly passes it in, so this folder knows nothing of runtimes/.
 */
export type LifecycleDeps = Core & { restartGateway(): Promise<void> };

/** POST /app/restart, /app/update, /gateway/restart: 202 now, the act on a human's click. */
export function lifecycleRoutes(deps: LifecycleDeps): Router {
  const router = Router();
  const requests = new LifecycleRequests(deps, (action) => perform(deps, action));
  const route = (path: string, action: LifecycleAction): void => {
    router.post(path, (_req, res) => void res.status(202).json(requests.request(action)));
  };
  route('/app/restart', 'restart');
  route('/app/update', 'update');
  route('/gateway/restart', 'gateway-restart');
  return router;
}

async function perform(deps: LifecycleDeps, action: LifecycleAction): Promise<void> {
  deps.log.info({ action }, 'lifecycle action confirmed');
  if (action === 'restart') return deps.host.relaunch();
  if (action === 'update') return deps.host.update();
  // Stops the gateway the service runs (if any) and starts it again; running turns on it end
  // with an error. An external gateway (SPACE_RUNTIMEA_GATEWAY_URL) is not ours to restart.
  return deps.restartGateway();
}
