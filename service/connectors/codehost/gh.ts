import { mkdir } from 'node:fs/promises';
import { HttpError } from '../../errors.js';
import { runToEnd } from '../../process/run.js';
import type { OwnedProcess, Supervisor } from '../../process/supervisor.js';
import { which } from '../../process/which.js';
import { ghFailure } from './gh-output.js';

/**
 * The code-host CLI (gh) as the device flow uses it: its config dir (GH_CONFIG_DIR, where
 * its token cache `hosts.yml` lives) is the service's, tokens from the environment are
 * withheld (gh would refuse to log in while GH_TOKEN is set), prompts and colour are off,
 * and it runs on pipes, where it prints the one-time code instead of asking questions.
 */
const WITHHELD = ['GH_TOKEN', 'GITHUB_TOKEN', 'GH_ENTERPRISE_TOKEN', 'GITHUB_ENTERPRISE_TOKEN', 'GH_HOST', 'GH_CONFIG_DIR'];

export class GhCli {
  private readonly env: NodeJS.ProcessEnv;
  private storageFlag: Promise<string[]> | undefined;

  constructor(
    private readonly supervisor: Supervisor,
    private readonly bin: string,
    readonly host: string,
    readonly configDir: string,
    baseEnv: Readonly<Record<string, string | undefined>>,
  ) {
    const env: NodeJS.ProcessEnv = Object.fromEntries(Object.entries(baseEnv).filter(([key]) => !WITHHELD.includes(key)));
    this.env = { ...env, GH_CONFIG_DIR: configDir, GH_PROMPT_DISABLED: '1', GH_NO_UPDATE_NOTIFIER: '1', NO_COLOR: '1' };
  }

  checkAvailable(): void {
    if (!which(this.bin, this.env.PATH ?? '')) throw new HttpError(503, `code-host CLI missing: ${this.bin} not found on PATH`);
  }

  /** `gh auth login --web` as a supervised child; it prints the code, then waits for approval. */
  async startLogin(): Promise<OwnedProcess> {
    await mkdir(this.configDir, { recursive: true, mode: 0o700 });
    const args = ['auth', 'login', '--web', '--hostname', this.host, '--git-protocol', 'https', ...(await this.storageFlags())];
    try {
      return await this.supervisor.spawn({ command: this.bin, args, env: this.env, stdio: ['ignore', 'pipe', 'pipe'] });
    } catch (err) {
      throw new HttpError(503, `code-host CLI missing: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`);
    }
  }

  /** The token gh holds for the host (`gh auth token`: reads its file or the OS keyring alike). */
  async token(): Promise<string> {
    const result = await this.run(['auth', 'token', '--hostname', this.host]);
    const token = result.stdout.trim();
    if (result.code !== 0 || token === '') throw new Error(`gh auth token failed: ${ghFailure(result.stderr)}`);
    return token;
  }

  /** Removes the host's login from gh's cache; best effort (nothing there is fine). */
  async logout(): Promise<void> {
    if (!which(this.bin, this.env.PATH ?? '')) return;
    await this.run(['auth', 'logout', '--hostname', this.host]).catch(() => undefined);
  }

  /**
   * gh 2.26+ keeps tokens in the OS keyring unless told `--insecure-storage`; the spec wants
   * them in the CLI's token cache file. Older gh (Debian's 2.23) has no such flag and always
   * writes the file.
   */
  private storageFlags(): Promise<string[]> {
    this.storageFlag ??= this.run(['auth', 'login', '--help'])
      .then((r) => (`${r.stdout}${r.stderr}`.includes('--insecure-storage') ? ['--insecure-storage'] : []))
      .catch(() => []);
    return this.storageFlag;
  }

  private run(args: string[]) {
    return runToEnd(this.supervisor, { command: this.bin, args, env: this.env, timeoutMs: 15_000, maxStdout: 64 * 1024 });
  }
}
