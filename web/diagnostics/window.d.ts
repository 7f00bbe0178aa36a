// Types only, for `npm run typecheck` (tsconfig.web.json); never served.

/** The part of the Electron host's bridge (preload/index.cts) the page uses; absent in a browser. */
interface SpaceBridge {
  signIn: {
    start(): Promise<{ authorize_url: string; auth_session_id: string }>;
    waitForApproval(authSessionId: string): Promise<{ status: 'pending' | 'approved' | 'expired' }>;
    consume(authSessionId: string): Promise<unknown>;
  };
}

interface Window {
  space?: SpaceBridge;
}
