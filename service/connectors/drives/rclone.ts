import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import { HttpError } from '../../errors.js';
import { runToEnd, type RunResult } from '../../process/run.js';
import type { OwnedProcess, Supervisor } from '../../process/supervisor.js';
import { which } from '../../process/which.js';
import { KeyedLock } from '../../stores/lock.js';
import { failureLine, parseConfigQuestion } from './output.js';

/**
 * The sync tool (rclone) as the drive connectors use it: always with the one shared config
 * file given explicitly, never a password prompt, no shell, every positional argument
 * after `--`. Changes to the config file are serialized here; rclone rewrites the whole
 * file on each change, so two at once could lose one.
 */
const MISSING = 'sync tool missing or unreachable';
const STEP_TIMEOUT_MS = 60_000;
/** More steps than any backend's questions after the token (OneDrive asks three). */
const MAX_CONFIG_STEPS = 8;

const configWrites = new KeyedLock();

export class RemoteWriteError extends Error {}

export class Rclone {
  private readonly env: NodeJS.ProcessEnv;

  constructor(
    private readonly supervisor: Supervisor,
    private readonly bin: string,
    readonly configFile: string,
    env: Readonly<Record<string, string | undefined>>,
  ) {
    // The config file is always the one given by --config.
    const { RCLONE_CONFIG: _ignored, ...rest } = env;
    this.env = rest;
  }

  /** 503 unless the program is on PATH (checked on every drive request: it may be installed later). */
  checkAvailable(): void {
    if (!which(this.bin, this.env.PATH ?? '')) throw new HttpError(503, `${MISSING}: ${this.bin} not found on PATH`);
  }

  /** Every remote in the config file: name -> backend type. */
  async remotes(): Promise<Map<string, string>> {
    const result = await this.run(['config', 'dump'], 30_000);
    if (result.code !== 0) throw new HttpError(503, `${MISSING}: ${failureLine(result.stderr)}`);
    let dump: unknown;
    try {
      dump = JSON.parse(result.stdout);
    } catch {
      throw new HttpError(503, `${MISSING}: unreadable answer to config dump`);
    }
    const remotes = new Map<string, string>();
    for (const [name, section] of Object.entries((dump ?? {}) as Record<string, { type?: unknown }>)) {
      if (typeof section?.type === 'string') remotes.set(name, section.type);
    }
    return remotes;
  }

  async deleteRemote(name: string): Promise<void> {
    await configWrites.run(this.configFile, async () => {
      const result = await this.run(['config', 'delete', '--', name], 30_000);
      if (result.code !== 0) throw new HttpError(503, `${MISSING}: ${failureLine(result.stderr)}`);
    });
  }

  /**
   * Writes the remote with its new token (`config create`, or `config update` of an existing
   * one, which keeps its other settings), then answers the backend's remaining questions
   * with rclone's defaults: Google Drive asks about shared drives, OneDrive picks its drive
   * through Microsoft Graph. A remote created here is removed again if a later step fails.
   */
  writeRemote(name: string, type: string, token: string, existing: boolean): Promise<void> {
    return configWrites.run(this.configFile, async () => {
      await mkdir(path.dirname(this.configFile), { recursive: true, mode: 0o700 });
      const first = existing
        ? ['config', 'update', '--non-interactive', '--', name, `token=${token}`, 'config_refresh_token=false']
        : ['config', 'create', '--non-interactive', '--', name, type, `token=${token}`, 'config_refresh_token=false'];
      try {
        await this.answerQuestions(name, first);
      } catch (err) {
        if (!existing) await this.run(['config', 'delete', '--', name], 30_000).catch(() => undefined);
        throw err;
      }
    });
  }

  /** `rclone authorize <type>`: the OAuth listener on 127.0.0.1:53682, as a supervised child. */
  async authorize(type: string): Promise<OwnedProcess> {
    try {
      return await this.supervisor.spawn({
        command: this.bin,
        args: this.globalArgs('authorize', '--auth-no-open-browser', '--', type),
        env: this.env,
        stdio: ['ignore', 'pipe', 'pipe'],
      });
    } catch (err) {
      throw startFailure(err);
    }
  }

  private async answerQuestions(name: string, firstArgs: string[]): Promise<void> {
    let args = firstArgs;
    for (let step = 0; step < MAX_CONFIG_STEPS; step++) {
      const result = await this.run(args, STEP_TIMEOUT_MS);
      if (result.timedOut) throw new RemoteWriteError('the sync tool did not finish configuring the remote in time');
      if (result.code !== 0) throw new RemoteWriteError(failureLine(result.stderr));
      const question = parseConfigQuestion(result.stdout);
      if (!question) throw new RemoteWriteError('unreadable answer from the sync tool while configuring the remote');
      if (question.error) throw new RemoteWriteError(question.error);
      if (question.state === '') return;
      args = ['config', 'update', '--continue', '--non-interactive', '--state', question.state, '--result', question.answer, '--', name];
    }
    throw new RemoteWriteError('the sync tool kept asking questions while configuring the remote');
  }

  private async run(args: string[], timeoutMs: number): Promise<RunResult> {
    try {
      return await runToEnd(this.supervisor, { command: this.bin, args: this.globalArgs(...args), env: this.env, timeoutMs });
    } catch (err) {
      throw startFailure(err);
    }
  }

  /** Global flags first: after the command's `--` they would be read as arguments. */
  private globalArgs(...args: string[]): string[] {
    return ['--config', this.configFile, '--ask-password=false', ...args];
  }
}

function startFailure(err: unknown): HttpError {
  const code = (err as NodeJS.ErrnoException).code;
  return new HttpError(503, `${MISSING}: ${code ?? (err as Error).message}`);
}
