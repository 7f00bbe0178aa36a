import { randomUUID } from 'node:crypto';
import { createInterface } from 'node:readline';
import { HttpError } from '../../errors.js';
import type { Logger } from '../../log.js';
import type { OwnedProcess } from '../../process/supervisor.js';
import type { GhCli } from './gh.js';
import { ghFailure, parseUserCode, parseVerificationUri } from './gh-output.js';

/**
 * Code-host device sessions: one `gh auth login --web` child each. `pending` while gh waits
 * for the user to enter the code, `approved` once gh has exited 0 and its token is in the
 * token file, `expired` when gh gave up, the session outlived its lifetime, it was
 * cancelled, or a newer start replaced it (one login at a time: they share gh's config).
 * Ended sessions are remembered for one more lifetime so a late poll still gets an answer.
 */
export type DeviceStatus = 'pending' | 'approved' | 'expired';

export interface DeviceSessionView {
  session_id: string;
  user_code: string;
  verification_uri: string;
  expires_in: number;
}

interface DeviceSession {
  id: string;
  status: DeviceStatus;
  process: OwnedProcess;
  /** The tail of what gh printed, for a failure message. */
  output: string;
}

const CODE_WAIT_MS = 20_000;

export class DeviceFlows {
  private readonly sessions = new Map<string, DeviceSession>();
  private current: DeviceSession | undefined;

  constructor(
    private readonly gh: GhCli,
    private readonly log: Logger,
    private readonly ttlMs: number,
    /** Stores the approved token (token file); its failure leaves the session expired. */
    private readonly onApproved: (token: string) => Promise<void>,
  ) {}

  async start(): Promise<DeviceSessionView> {
    this.gh.checkAvailable();
    if (this.current) await this.end(this.current, 'replaced by a newer start');
    const process = await this.gh.startLogin();
    const session: DeviceSession = { id: randomUUID(), status: 'pending', process, output: '' };
    this.watch(session);
    let code: { userCode: string; uri: string };
    try {
      code = await readCode(process);
    } catch (err) {
      await process.stop(1000);
      throw new HttpError(502, `The code-host CLI did not start a device login: ${(err as Error).message}`);
    }
    this.sessions.set(session.id, session);
    this.current = session;
    setTimeout(() => void this.end(session, 'expired'), this.ttlMs).unref();
    this.log.info({ connector: 'codehost', session_id: session.id }, 'device login started');
    return { session_id: session.id, user_code: code.userCode, verification_uri: code.uri, expires_in: Math.round(this.ttlMs / 1000) };
  }

  poll(id: string): DeviceStatus {
    return this.get(id).status;
  }

  async cancel(id: string): Promise<void> {
    await this.end(this.get(id), 'cancelled');
  }

  private get(id: string): DeviceSession {
    const session = this.sessions.get(id);
    if (!session) throw new HttpError(404, 'unknown or expired session');
    return session;
  }

  private async end(session: DeviceSession, why: string): Promise<void> {
    if (session.status === 'pending') {
      session.status = 'expired';
      this.log.info({ connector: 'codehost', session_id: session.id, why }, 'device login ended');
    }
    if (this.current === session) this.current = undefined;
    await session.process.stop(1000);
    setTimeout(() => this.sessions.delete(session.id), this.ttlMs).unref();
  }

  private watch(session: DeviceSession): void {
    for (const stream of [session.process.child.stdout!, session.process.child.stderr!]) {
      stream.on('data', (chunk: Buffer) => (session.output = `${session.output}${chunk.toString('utf8')}`.slice(-8192)));
    }
    void session.process.exited.then(async ({ code }) => {
      if (session.status !== 'pending') return;
      try {
        if (code !== 0) throw new Error(ghFailure(session.output));
        await this.onApproved(await this.gh.token());
        session.status = 'approved';
        this.log.info({ connector: 'codehost', session_id: session.id }, 'device login approved');
      } catch (err) {
        session.status = 'expired';
        this.log.warn({ connector: 'codehost', session_id: session.id, error: (err as Error).message }, 'device login failed');
      }
      if (this.current === session) this.current = undefined;
    });
  }
}

/** Waits for gh's one-time code and URL (stdout or stderr), or fails when gh exits first. */
function readCode(process: OwnedProcess): Promise<{ userCode: string; uri: string }> {
  return new Promise((resolve, reject) => {
    let userCode: string | undefined;
    let uri: string | undefined;
    let seen = '';
    const timer = setTimeout(() => reject(new Error('no one-time code in time')), CODE_WAIT_MS);
    for (const stream of [process.child.stdout!, process.child.stderr!]) {
      createInterface({ input: stream, crlfDelay: Infinity }).on('line', (line) => {
        seen = `${seen}${line}\n`.slice(-4096);
        userCode ??= parseUserCode(line);
        uri ??= parseVerificationUri(line);
        if (userCode && uri) {
          clearTimeout(timer);
          resolve({ userCode, uri });
        }
      });
    }
    void process.exited.then(() => {
      clearTimeout(timer);
      // Lines still in the pipe are read before 'exit' settles anything else; give them a tick.
      setImmediate(() => reject(new Error(ghFailure(seen))));
    });
  });
}
