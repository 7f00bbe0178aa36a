import { randomUUID } from 'node:crypto';
import type { OwnedProcess } from '../../process/supervisor.js';
import type { DriveConnector } from './kinds.js';

/**
 * One drive OAuth session (spec: Drive OAuth session). `pending` until rclone prints its
 * link, `awaiting_oauth` until the token is in and the remote written (`completed`), or
 * `error` with a message. Cancel and expiry end it: it is forgotten.
 */
export type DriveStatus = 'pending' | 'awaiting_oauth' | 'completed' | 'error';

export interface DriveSessionView {
  session_id: string;
  status: DriveStatus;
  auth_url: string;
  needs_manual_code: boolean;
  remote_name: string;
  error: string | null;
}

export class DriveSession {
  readonly id = randomUUID();
  status: DriveStatus = 'pending';
  authUrl = '';
  error: string | null = null;
  /** The `state` rclone put in its link: a pasted redirect URL must carry the same. */
  oauthState: string | undefined;
  process: OwnedProcess | undefined;
  submitting = false;
  /** rclone logged `Got code`: its listener has the code, whatever its HTTP answer said. */
  codeTaken = false;
  /** Set once cancelled or expired: late events from the child are ignored. */
  ended = false;
  private settle!: () => void;
  /** Resolves once the session is completed, failed or ended. */
  readonly settled = new Promise<void>((resolve) => (this.settle = resolve));

  constructor(
    readonly connector: DriveConnector,
    readonly remoteName: string,
    /** The remote exists already (force): it is updated, keeping its token until the new one is in. */
    readonly existing: boolean,
  ) {}

  awaitCode(authUrl: string): void {
    if (this.status === 'pending') {
      this.status = 'awaiting_oauth';
      this.authUrl = authUrl;
    }
  }

  complete(): void {
    this.status = 'completed';
    this.settle();
  }

  fail(message: string): void {
    if (this.status === 'completed' || this.status === 'error') return;
    this.status = 'error';
    this.error = message;
    this.settle();
  }

  end(): void {
    this.ended = true;
    this.settle();
  }

  /** Read through a call so narrowing across awaits does not hide later changes. */
  current(): DriveStatus {
    return this.status;
  }

  view(): DriveSessionView {
    return {
      session_id: this.id,
      status: this.status,
      auth_url: this.authUrl,
      // The service listens on loopback only, so the user's browser runs on this machine and
      // the provider's redirect reaches rclone's listener by itself; submit stays available.
      needs_manual_code: false,
      remote_name: this.remoteName,
      error: this.error,
    };
  }
}
