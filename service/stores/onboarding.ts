import { HttpError } from '../errors.js';
import { JsonFile } from './json-file.js';

/**
 * The onboarding state file, ~/.space-state/state.json. It is a plain JSON object in the
 * format electron-store (conf) reads; written through JsonFile rather than conf itself
 * because conf writes synchronously, on the event loop, and without the per-path queue
 * every other store here shares. Fields other than the spec's three are kept as they are.
 */
export interface OnboardingState {
  onboarding_completed: boolean;
  onboarding_step: string;
  first_run_at: string;
}

type StateFile = Record<string, unknown>;

const FIRST_STEP = 'welcome';

export class OnboardingStore {
  private readonly json: JsonFile<StateFile>;

  constructor(
    readonly file: string,
    private readonly now: () => Date = () => new Date(),
  ) {
    this.json = new JsonFile<StateFile>(file, () => ({}), { mode: 0o600, dirMode: 0o700, parentMode: 0o700 });
  }

  /** The state; the first read ever records `first_run_at` (and writes the file once). */
  async get(): Promise<OnboardingState> {
    const current = this.checked(await this.json.read());
    if (typeof current.first_run_at === 'string') return view(current);
    return this.change((state) => state);
  }

  /** Idempotent: a second call changes nothing but keeps answering the same state. */
  async complete(): Promise<OnboardingState> {
    const current = this.checked(await this.json.read());
    if (current.onboarding_completed === true && typeof current.first_run_at === 'string') return view(current);
    return this.change((state) => ({ ...state, onboarding_completed: true }));
  }

  private async change(edit: (state: StateFile) => StateFile): Promise<OnboardingState> {
    const state = await this.json.update((raw) => {
      const current = this.checked(raw);
      const seeded = typeof current.first_run_at === 'string' ? current : { ...current, first_run_at: this.now().toISOString() };
      const next = edit(seeded);
      return { next, result: next };
    });
    return view(state);
  }

  private checked(value: unknown): StateFile {
    if (typeof value === 'object' && value !== null && !Array.isArray(value)) return value as StateFile;
    throw new HttpError(500, `${this.file} is not a JSON object; fix or remove it (it was left untouched)`);
  }
}

function view(state: StateFile): OnboardingState {
  return {
    onboarding_completed: state.onboarding_completed === true,
    onboarding_step: typeof state.onboarding_step === 'string' ? state.onboarding_step : FIRST_STEP,
    first_run_at: state.first_run_at as string,
  };
}
