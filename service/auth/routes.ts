import { Router, type Request } from 'express';
import { z } from 'zod';
import type { Core } from '../core.js';
import { HttpError } from '../errors.js';
import { parseBody } from '../http/request-body.js';
import type { SignIn } from './sign-in.js';
import type { AuthState } from './state.js';
import { UpstreamError, type UpstreamClient } from './upstream.js';

const ConsumeBody = z.object({ auth_session_id: z.string().min(1), poll_token: z.string().min(1) });
const ConsumeHeldBody = z.object({ auth_session_id: z.string().min(1).max(200) });

/** What the sign-in routes read: the auth state, the sign-in flows and the upstream client. */
export type AuthDeps = Core & { auth: AuthState; signIn: SignIn; upstream: UpstreamClient };

/** Upstream sign-in (poll-token flow): thin routes over signIn and upstream. */
export function authRoutes(deps: AuthDeps): Router {
  const router = Router();

  router.post('/space-auth/start', async (req, res) => {
    const { authorize_url, auth_session_id, poll_token } = await deps.signIn.start();
    // Browsers (the renderer included) never see the poll_token; a non-browser caller on
    // loopback is the trusted shell the spec allows to hold it.
    res.json(isBrowser(req) ? { authorize_url, auth_session_id } : { authorize_url, auth_session_id, poll_token });
  });

  router.get('/space-auth/status/:auth_session_id', async (req, res) => {
    res.json(await deps.signIn.status(req.params.auth_session_id));
  });

  router.post('/space-auth/consume', async (req, res) => {
    const body = parseBody(ConsumeBody, req.body, 'auth_session_id or poll_token missing');
    res.json(await deps.signIn.consume(body.auth_session_id, body.poll_token));
  });

  // Not in the spec: the browser's way to finish a sign-in it started (the diagnostics page).
  // The service consumes with the poll_token it holds, which the browser never had.
  router.post('/space-auth/consume-held', async (req, res) => {
    const body = parseBody(ConsumeHeldBody, req.body, 'auth_session_id missing');
    res.json(await deps.signIn.consumeHeld(body.auth_session_id));
  });

  router.get('/space-auth/whoami', async (_req, res) => {
    const bearer = deps.auth.bearer();
    if (!bearer) throw new HttpError(401, 'Not signed in: no upstream bearer (sign in through /space-auth or set SPACE_API_KEY)');
    try {
      res.json(await deps.upstream.me(bearer));
    } catch (err) {
      if (err instanceof UpstreamError && (err.upstreamStatus === 401 || err.upstreamStatus === 403)) {
        throw new HttpError(401, `The upstream service refused the bearer (HTTP ${err.upstreamStatus}); sign in again`);
      }
      throw err;
    }
  });

  router.get('/space-auth/state', (_req, res) => {
    res.json({ ...deps.auth.sanitized(), upstream_configured: deps.upstream.configured, pending_sign_ins: deps.signIn.pendingCount });
  });

  router.post('/space-auth/logout', (_req, res) => {
    deps.signIn.logout();
    const { signed_in, source } = deps.auth.sanitized();
    res.json({ ok: true, signed_in, source });
  });

  return router;
}

/** A browser always sends Origin on a POST, and Sec-Fetch-* on every request. */
function isBrowser(req: Request): boolean {
  return req.headers.origin !== undefined || req.headers['sec-fetch-site'] !== undefined || req.headers['sec-fetch-mode'] !== undefined;
}
