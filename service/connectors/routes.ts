import type { Router } from 'express';
import type { ServiceContext } from '../context.js';
import { driveRoutes } from './drives/routes.js';

/** Every connector's router (spec: Connectors). */
export function connectorRoutes(ctx: ServiceContext): Router[] {
  return [driveRoutes(ctx)];
}
