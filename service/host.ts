/**
 * What the service needs from whatever process embeds it. The Electron main process
 * (main/host.ts) and plain Node (`npm start`, below) both implement it; the service
 * never learns which one it runs under except through these members.
 */
export type LifecycleAction = 'restart' | 'update' | 'gateway-restart';

export interface ConfirmRequest {
  action: LifecycleAction;
  title: string;
  message: string;
}

export interface Host {
  readonly kind: 'headless' | 'electron';
  /** Per-launch secret every request but `GET /` must carry; undefined means none is required. */
  readonly token: string | undefined;
  /** Origins of the app's own renderer (e.g. `app://space`). */
  readonly rendererOrigins: readonly string[];
  /**
   * Asks a human, outside any renderer, whether to go ahead. Undefined when nobody can be
   * asked (headless): the service then refuses destructive lifecycle actions.
   */
  readonly confirm: ((request: ConfirmRequest) => Promise<boolean>) | undefined;
  /** Restarts the whole app; the host shuts the service down first. */
  relaunch(): Promise<void>;
  /** Fetches, verifies and installs a signed update, then restarts. */
  update(): Promise<void>;
}

export function createHeadlessHost(options: { token?: string | undefined } = {}): Host {
  const refuse = async (): Promise<void> => {
    throw new Error('headless mode cannot restart or update itself');
  };
  return {
    kind: 'headless',
    token: options.token,
    rendererOrigins: [],
    confirm: undefined,
    relaunch: refuse,
    update: refuse,
  };
}
