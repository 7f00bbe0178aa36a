import { Router } from 'express';
import type { ServiceContext } from '../context.js';

export function bootstrapRoutes(_ctx: ServiceContext): Router {
  return Router();
}
