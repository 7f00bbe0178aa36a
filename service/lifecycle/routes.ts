import { Router } from 'express';
import type { ServiceContext } from '../context.js';
import type { LifecycleAction } from '../host.js';
import { runtimeaGateway } from '../runtimes/runtimea/instance.js';
import { LifecycleRequests } from './confirm.js';

/** POST /app/restart, /app/update, /gateway/restart: 202 now, the act on a human's click. */
export function lifecycleRoutes(ctx: ServiceContext): Router {
  const router = Router();
  const requests = new LifecycleRequests(ctx, (action) => perform(ctx, action));
  const route = (path: string, action: LifecycleAction): void => {
    router.post(path, (_req, res) => void res.status(202).json(requests.request(action)));
  };
  route('/app/restart', 'restart');
  route('/app/update', 'update');
  route('/gateway/restart', 'gateway-restart');
  return router;
}

async function perform(ctx: ServiceContext, action: LifecycleAction): Promise<void> {
  ctx.log.info({ action }, 'lifecycle action confirmed');
  if (action === 'restart') return ctx.host.relaunch();
  if (action === 'update') return ctx.host.update();
  // Stops the gateway the service runs (if any) and starts it again; running turns on it end
  // with an error. An external gateway (SPACE_RUNTIMEA_GATEWAY_URL) is not ours to restart.
  return runtimeaGateway(ctx).restart();
}
