import type { Router } from 'express';
import type { ServiceContext } from '../context.js';
import { lifecycleRoutes } from '../lifecycle/routes.js';
import { statusRoutes } from '../status/routes.js';

/** Every feature's router, in one list: the map from the spec's sections to code. */
export function featureRouters(ctx: ServiceContext): Router[] {
  return [statusRoutes(ctx), lifecycleRoutes(ctx)];
}
