import { createInterface } from 'node:readline';
import { HttpError } from '../../errors.js';
import type { Logger } from '../../log.js';
import { BACKEND_TYPE, OAUTH_PORT, type DriveConnector } from './kinds.js';
import { getOnce } from './listener.js';
import { failureLine, parseAuthLink, parseAuthorizeToken } from './output.js';
import { portIsFree } from './port.js';
import { RemoteWriteError, type Rclone } from './rclone.js';
import { DriveSession } from './session.js';
import { parseSubmittedCode } from './submit-input.js';

/**
 * The drive OAuth flows of both drives. rclone's listener has one fixed port, so one flow
 * runs at a time across drivea and driveb: the lock is held from start until the rclone
 * child has exited (the port is free again). Sessions live in memory and are forgotten
 * on cancel, on expiry (the child is killed) and on restart.
 */
const UNKNOWN = 'unknown or expired session';
const BUSY = 'concurrent OAuth flow running';
const SUBMIT_SETTLE_MS = 30_000;
const DELIVERY_GRACE_MS = 2000;
const MAX_STDOUT = 64 * 1024;

export class DriveFlows {
  private readonly sessions = new Map<string, DriveSession>();
  /** The session whose rclone child holds the port (or is being started). */
  private holder: DriveSession | undefined;
  private reserved = false;

  constructor(
    private readonly rclone: Rclone,
    private readonly log: Logger,
    private readonly ttlMs: number,
  ) {}

  async start(connector: DriveConnector, name: string, force: boolean): Promise<DriveSession> {
    if (this.holder || this.reserved) throw new HttpError(409, BUSY);
    this.reserved = true;
    try {
      if (!(await portIsFree(OAUTH_PORT))) throw new HttpError(409, `${BUSY}: port ${OAUTH_PORT} is held by another program; close it and try again`);
      const type = (await this.rclone.remotes()).get(name);
      if (type !== undefined && !force) throw new HttpError(409, `Remote ${name} already exists; send force: true to re-authorize it`);
      if (type !== undefined && type !== BACKEND_TYPE[connector]) throw new HttpError(409, `Remote ${name} exists with another type (${type})`);
      const session = new DriveSession(connector, name, type !== undefined);
      session.process = await this.rclone.authorize(BACKEND_TYPE[connector]);
      this.holder = session;
      this.sessions.set(session.id, session);
      this.watch(session);
      setTimeout(() => void this.expire(session), this.ttlMs).unref();
      this.log.info({ connector, session_id: session.id, remote: name, force }, 'drive oauth flow started');
      return session;
    } finally {
      this.reserved = false;
    }
  }

  get(connector: DriveConnector, id: string): DriveSession {
    const session = this.sessions.get(id);
    if (!session || session.connector !== connector) throw new HttpError(404, UNKNOWN);
    return session;
  }

  /** Hands the pasted code to rclone's listener, after checking its state ourselves. */
  async submit(connector: DriveConnector, id: string, input: string): Promise<void> {
    const session = this.get(connector, id);
    if (session.status !== 'awaiting_oauth' || !session.oauthState || session.submitting) {
      throw new HttpError(409, `Session is ${session.submitting ? 'already handling a code' : session.status}; no code is awaited`);
    }
    const parsed = parseSubmittedCode(input);
    if (parsed.kind === 'invalid') throw new HttpError(400, `Invalid code: ${parsed.reason}`);
    if (parsed.kind === 'denied') {
      session.fail(`authorization denied by the provider (${parsed.error})`);
      await this.stopChild(session);
      throw new HttpError(400, session.error!);
    }
    // A wrong state would make rclone exit; refuse it here and keep the flow alive.
    if (parsed.state !== undefined && parsed.state !== session.oauthState) throw new HttpError(400, 'state does not match this session');
    session.submitting = true;
    try {
      await deliverCode(session.oauthState, parsed.code);
    } catch (err) {
      // rclone at times closes the connection right after taking the code; its log tells.
      await Promise.race([session.settled, delay(DELIVERY_GRACE_MS)]);
      if (!session.codeTaken && session.current() === 'awaiting_oauth') {
        session.submitting = false;
        throw new HttpError(502, `The sync tool did not take the code: ${(err as Error).message}`);
      }
    }
    await Promise.race([session.settled, delay(SUBMIT_SETTLE_MS)]);
    if (session.current() === 'error') throw new HttpError(502, session.error!);
  }

  async cancel(connector: DriveConnector, id: string): Promise<void> {
    const session = this.get(connector, id);
    session.end();
    this.sessions.delete(id);
    await this.stopChild(session);
    this.log.info({ connector, session_id: id }, 'drive oauth flow cancelled');
  }

  private async expire(session: DriveSession): Promise<void> {
    if (!this.sessions.has(session.id)) return;
    session.end();
    // Forgotten once its child is gone, so a 404 means nothing is left running.
    await this.stopChild(session);
    this.sessions.delete(session.id);
    this.log.info({ connector: session.connector, session_id: session.id }, 'drive oauth session expired');
  }

  /** Stops rclone (its whole group) and frees the port before returning. */
  private async stopChild(session: DriveSession): Promise<void> {
    await session.process?.stop(1000);
    // A Go program's leader thread can show as a zombie while its other threads (and the
    // listening socket) are still going; the exit event comes once all of them are gone.
    await session.process?.exited;
    if (this.holder === session) this.holder = undefined;
  }

  /** Reads rclone's link from stderr and its token from stdout; writes the remote on success. */
  private watch(session: DriveSession): void {
    const child = session.process!.child;
    let stdout = '';
    let stderr = '';
    child.stdout!.setEncoding('utf8');
    child.stdout!.on('data', (chunk: string) => {
      if (stdout.length < MAX_STDOUT) stdout += chunk;
    });
    createInterface({ input: child.stderr!, crlfDelay: Infinity }).on('line', (line) => {
      stderr = `${stderr}${line}\n`.slice(-16 * 1024);
      if (/NOTICE: Got code/.test(line)) session.codeTaken = true;
      const link = session.oauthState ? undefined : parseAuthLink(line);
      if (!link) return;
      session.oauthState = link.state;
      void providerUrl(link.url).then((url) => session.awaitCode(url));
    });
    void session.process!.exited.then(async ({ code }) => {
      if (this.holder === session) this.holder = undefined;
      if (session.ended) return;
      const token = code === 0 ? parseAuthorizeToken(stdout) : undefined;
      if (!token) {
        session.fail(code === 0 ? 'the sync tool returned no token' : failureLine(stderr));
        this.log.warn({ connector: session.connector, session_id: session.id, error: session.error }, 'drive oauth flow failed');
        return;
      }
      await this.writeRemote(session, token);
    });
  }

  private async writeRemote(session: DriveSession, token: string): Promise<void> {
    try {
      await this.rclone.writeRemote(session.remoteName, BACKEND_TYPE[session.connector], token, session.existing);
      session.complete();
      this.log.info({ connector: session.connector, session_id: session.id, remote: session.remoteName }, 'drive remote written');
    } catch (err) {
      session.fail(err instanceof RemoteWriteError || err instanceof HttpError ? err.message : `writing the remote failed: ${(err as Error).message}`);
      this.log.warn({ connector: session.connector, session_id: session.id, error: session.error }, 'drive remote not written');
    }
  }
}

/**
 * The provider's own authorize URL, from the 307 of rclone's `/auth?state=` page (a safe
 * request, unlike `/`): a https link the desktop host opens in the system browser. The
 * local link is kept if rclone does not answer with a redirect.
 */
async function providerUrl(localUrl: string): Promise<string> {
  try {
    const { location } = await getOnce(localUrl, 3000);
    return location && /^https?:\/\//.test(location) ? location : localUrl;
  } catch {
    return localUrl;
  }
}

/** What the provider's redirect would have delivered to rclone's listener. */
async function deliverCode(state: string, code: string): Promise<void> {
  const url = `http://127.0.0.1:${OAUTH_PORT}/?${new URLSearchParams({ state, code })}`;
  const { status } = await getOnce(url, 10_000);
  if (status !== 200) throw new Error(`its listener answered ${status}`);
}

function delay(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms).unref());
}
