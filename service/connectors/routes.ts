import type { Router } from 'express';
import { ConnectorTokenStore } from '../stores/connector-tokens.js';
import { agenthostRoutes } from './agenthost/routes.js';
import { codehostRoutes } from './codehost/routes.js';
import { deployhostRoutes, type DeployhostDeps } from './deployhost/routes.js';
import { driveRoutes } from './drives/routes.js';

/** Every connector's router (spec: Connectors), over one token file. */
export function connectorRoutes(deps: DeployhostDeps): Router[] {
  const tokens = new ConnectorTokenStore(deps.config.connectors.tokenFile);
  return [driveRoutes(deps), codehostRoutes(deps, tokens), deployhostRoutes(deps, tokens), agenthostRoutes(deps, tokens)];
}
