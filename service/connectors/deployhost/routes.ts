import { Router, type Request } from 'express';
import { z } from 'zod';
import type { Core } from '../../core.js';
import { HttpError } from '../../errors.js';
import { parseBody } from '../../http/request-body.js';
import type { ConnectorTokenStore } from '../../stores/connector-tokens.js';
import { addTokenRoutes } from '../token-routes.js';
import { CALLBACK_HEADERS, renderCallbackPage, type CallbackPage } from './callback-page.js';
import { DeployhostOAuth } from './oauth.js';
import { resourceMetadata } from './resource-metadata.js';

const ExchangeBody = z.object({ code: z.string().min(1), state: z.string().min(1), code_verifier_id: z.string().optional() });

/** What the deploy-host routes read: the port actually listened on makes the default redirect URI. */
export type DeployhostDeps = Core & { port(): number };

/** The deploy host (spec: Deploy-host connector): a pasted token, or OAuth with PKCE and DCR. */
export function deployhostRoutes(deps: DeployhostDeps, store: ConnectorTokenStore): Router {
  const router = Router();
  const redirectUri = () => deps.config.deployhostRedirectUri ?? `http://127.0.0.1:${deps.port()}/callback`;
  const flow = new DeployhostOAuth(deps.config.connectors, store, redirectUri, deps.log);

  addTokenRoutes(router, { name: 'deployhost', store, log: deps.log, check: (token) => flow.user(token), showsUser: true });

  router.get('/api/connectors/deployhost/oauth/start', async (_req, res) => {
    res.json(await flow.start());
  });

  router.post('/api/connectors/deployhost/oauth/exchange', async (req, res) => {
    const body = parseBody(ExchangeBody, req.body, 'Body must be {code: string, state: string}');
    const user = await flow.finish(new URLSearchParams({ code: body.code, state: body.state }), body.code_verifier_id);
    res.json({ ok: true, user });
  });

  // The browser lands here from the deploy host; it gets a page, never JSON or a secret.
  router.get('/callback', async (req, res) => {
    const page = await callbackOutcome(flow, req);
    res.status(page.status).set(CALLBACK_HEADERS).send(renderCallbackPage(page));
  });

  router.get('/.well-known/oauth-protected-resource', async (req, res) => {
    const published = await flow.published();
    // The guard has checked Host: it is this service's own loopback address.
    res.json(resourceMetadata({ resource: `http://${req.headers.host}`, issuer: flow.issuer, ...published }));
  });

  return router;
}

async function callbackOutcome(flow: DeployhostOAuth, req: Request): Promise<CallbackPage> {
  const params = new URLSearchParams();
  for (const [key, value] of Object.entries(req.query)) if (typeof value === 'string') params.set(key, value);
  try {
    await flow.finish(params);
    return { status: 200, title: 'Deploy host connected', message: 'You can close this window and go back to Space.' };
  } catch (err) {
    const detail = err instanceof HttpError ? err.message : 'The sign-in could not be finished.';
    const status = err instanceof HttpError ? err.status : 500;
    return { status, title: 'Deploy host not connected', message: `${detail}. You can close this window and try again from Space.` };
  }
}
