import type { Core } from '../core.js';
import { HttpError } from '../errors.js';
import type { ConfirmRequest, LifecycleAction } from '../host.js';

/**
 * Destructive lifecycle actions run only after a human clicks yes in a native dialog of
 * the host, never on an HTTP request alone (a tool's output could send that request).
 * The request is answered at once with 202; the action happens, or not, on the click.
 */
const PROMPTS: Record<LifecycleAction, Omit<ConfirmRequest, 'action'>> = {
  restart: { title: 'Restart Space?', message: 'Something asked to restart the app. Running agent turns will be stopped.' },
  update: { title: 'Install update?', message: 'Something asked to update the app. It will download a signed update and restart.' },
  'gateway-restart': { title: 'Restart the agent gateway?', message: 'Something asked to restart the runtimea gateway. Running turns on it will be stopped.' },
};

export type Performer = (action: LifecycleAction) => Promise<void>;

export class LifecycleRequests {
  private pending: LifecycleAction | undefined;

  constructor(
    private readonly core: Core,
    private readonly perform: Performer,
  ) {}

  /** Asks the host's human; returns at once. Throws the refusal the client should see. */
  request(action: LifecycleAction): { status: 'awaiting_confirmation'; action: LifecycleAction } {
    const confirm = this.core.host.confirm;
    if (!confirm) {
      throw new HttpError(501, `Refused: ${describe(action)} needs a person to confirm it, and headless mode has nobody to ask. Do it from the shell instead.`);
    }
    if (this.pending) throw new HttpError(409, `A ${describe(this.pending)} is already awaiting confirmation`);
    this.pending = action;
    void confirm({ action, ...PROMPTS[action] })
      .then((yes) => (yes ? this.perform(action) : this.core.log.info({ action }, 'lifecycle action declined')))
      .catch((err: unknown) => this.core.log.error({ action, err: String(err) }, 'lifecycle action failed'))
      .finally(() => {
        this.pending = undefined;
      });
    return { status: 'awaiting_confirmation', action };
  }
}

function describe(action: LifecycleAction): string {
  return action === 'gateway-restart' ? 'gateway restart' : action;
}
