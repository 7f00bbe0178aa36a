import type { Router } from 'express';
import type { ServiceContext } from '../context.js';
import { ConnectorTokenStore } from '../stores/connector-tokens.js';
import { agenthostRoutes } from './agenthost/routes.js';
import { codehostRoutes } from './codehost/routes.js';
import { deployhostRoutes } from './deployhost/routes.js';
import { driveRoutes } from './drives/routes.js';

/** Every connector's router (spec: Connectors), over one token file. */
export function connectorRoutes(ctx: ServiceContext): Router[] {
  const tokens = new ConnectorTokenStore(ctx.config.connectors.tokenFile);
  return [driveRoutes(ctx), codehostRoutes(ctx, tokens), deployhostRoutes(ctx, tokens), agenthostRoutes(ctx, tokens)];
}
