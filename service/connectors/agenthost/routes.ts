import { Router } from 'express';
import type { Core } from '../../core.js';
import type { ConnectorTokenStore } from '../../stores/connector-tokens.js';
import { checkBearer } from '../bearer-check.js';
import { addTokenRoutes } from '../token-routes.js';

/**
 * The agent host (spec: Agent-host connector): a token under `agenthost`. It is checked
 * with GET SPACE_AGENTHOST_VALIDATE_URL (bearer) when that is set; otherwise stored as given
 * and reconnect says it could not be validated.
 */
export function agenthostRoutes(core: Core, store: ConnectorTokenStore): Router {
  const router = Router();
  const url = core.config.connectors.agenthostValidateUrl;
  const check = async (token: string) => (url ? checkBearer({ url, token, label: 'The agent host' }) : undefined);
  addTokenRoutes(router, { name: 'agenthost', store, log: core.log, check, showsUser: false });
  return router;
}
