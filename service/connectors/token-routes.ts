import type { Router } from 'express';
import { z } from 'zod';
import { HttpError } from '../errors.js';
import { parseBody } from '../http/request-body.js';
import type { Logger } from '../log.js';
import type { ConnectorTokenStore, StoredToken, TokenConnector } from '../stores/connector-tokens.js';

/**
 * The four routes every token connector shares (token, status, disconnect, reconnect),
 * over the token file. A connector brings its check of a token with its host; the answers
 * are the spec's where it shows them and documented in docs/connectors.md where it does not.
 */
export interface TokenConnectorSpec {
  name: TokenConnector;
  store: ConnectorTokenStore;
  log: Logger;
  /** The host's word on a token: its user, or undefined when there is nothing to check against. */
  check(token: string): Promise<Record<string, unknown> | undefined>;
  /** Whether answers carry the user (code host, deploy host) or not (agent host). */
  showsUser: boolean;
  /** More to forget on disconnect (the code-host CLI's own login). */
  onDisconnect?: () => Promise<void>;
}

const TokenBody = z.object({ token: z.string() });
const MAX_TOKEN = 8192;

export function addTokenRoutes(router: Router, spec: TokenConnectorSpec): void {
  const base = `/api/connectors/${spec.name}`;

  router.post(`${base}/token`, async (req, res) => {
    const token = checkToken(parseBody(TokenBody, req.body, 'Body must be {token: string}').token);
    const user = await spec.check(token);
    await spec.store.set(spec.name, { token, source: 'token', ...(user && spec.showsUser ? { user } : {}) });
    spec.log.info({ connector: spec.name }, 'connector token stored');
    res.json(spec.showsUser ? { ok: true, user: user ?? null } : { ok: true });
  });

  router.get(`${base}/status`, async (_req, res) => {
    res.json(statusOf(spec, await spec.store.get(spec.name)));
  });

  router.post(`${base}/disconnect`, async (_req, res) => {
    const removed = await spec.store.clear(spec.name);
    await spec.onDisconnect?.();
    if (removed) spec.log.info({ connector: spec.name }, 'connector token removed');
    res.json({ ok: true, connected: false });
  });

  router.post(`${base}/reconnect`, async (_req, res) => {
    const stored = await spec.store.get(spec.name);
    if (!stored) throw new HttpError(400, `No ${spec.name} token is stored; connect first`);
    let user: Record<string, unknown> | undefined;
    try {
      user = await spec.check(stored.token);
    } catch (err) {
      // A token its host refuses is dead: forget it, so status tells the truth.
      if (err instanceof HttpError && err.status === 400) {
        await spec.store.clear(spec.name);
        spec.log.info({ connector: spec.name }, 'connector token refused on reconnect; removed');
        throw new HttpError(400, `${err.message}; the stored token was removed`);
      }
      throw err;
    }
    if (user && spec.showsUser) await spec.store.set(spec.name, { ...withoutSavedAt(stored), user });
    res.json(spec.showsUser ? { ok: true, connected: true, user: user ?? stored.user ?? null } : { ok: true, connected: true, validated: user !== undefined });
  });
}

export function statusOf(spec: Pick<TokenConnectorSpec, 'showsUser'>, stored: StoredToken | undefined): Record<string, unknown> {
  if (!stored) return { connected: false };
  return spec.showsUser && stored.user ? { connected: true, user: stored.user } : { connected: true };
}

/** Trimmed; one line of visible characters (it goes into an Authorization header). */
export function checkToken(value: string): string {
  const token = value.trim();
  if (token === '' || token.length > MAX_TOKEN || !/^[\x21-\x7e]+$/.test(token)) {
    throw new HttpError(400, 'token must be a non-empty string of printable characters without spaces');
  }
  return token;
}

function withoutSavedAt(stored: StoredToken): Omit<StoredToken, 'saved_at'> {
  const { saved_at: _saved, ...rest } = stored;
  return rest;
}
