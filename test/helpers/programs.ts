import { readdirSync, readFileSync, readlinkSync, realpathSync } from 'node:fs';
import { programPath } from '../tools/programs.mjs';

/**
 * The real agent programs, for the real-program lanes. They run only inside the loopback-only
 * network namespace that test/tools/run-tests.sh makes (SPACE_TEST_NETNS=1), so they can reach
 * nothing but the fake model servers the tests start. Outside it, `realProgram` returns
 * undefined and the lane is skipped (shown as skipped, never as passed). Inside it, a program
 * that is not installed is an error, not a skip.
 */
export const inNetns = process.env.SPACE_TEST_NETNS === '1';

export type ProgramName = 'claude' | 'codex' | 'node24' | 'openclaw' | 'ccusage';

export function realProgram(name: ProgramName): string | undefined {
  if (!inNetns) return undefined;
  const found = programPath(name) as string | undefined;
  if (!found) throw new Error(`${name} is not installed: run node test/tools/programs.mjs`);
  return found;
}

/**
 * What a real claude lane starts the service with: the CLI pointed at the fake Messages API at
 * `apiUrl`, its telemetry, updater and error reports off, a short abort grace; `extra` on top.
 */
export function claudeLaneEnv(claude: string, apiUrl: string, extra: Record<string, string> = {}): Record<string, string> {
  return {
    SPACE_CLIA_BIN: claude,
    ANTHROPIC_BASE_URL: apiUrl,
    DISABLE_TELEMETRY: '1',
    DISABLE_AUTOUPDATER: '1',
    DISABLE_ERROR_REPORTING: '1',
    SPACE_CHAT_ABORT_GRACE_MS: '2000',
    ...extra,
  };
}

/**
 * Live processes running `binary` (zombies left out) in a folder below `home`: what an abort or a
 * shutdown must leave none of. The folder keeps other files' programs out (files run in
 * parallel) and still finds a program that outlived its parent: it keeps its working folder.
 */
export function processesOf(binary: string, home: string): number[] {
  const below = `${realpathSync(home)}/`;
  return readdirSync('/proc')
    .filter((p) => /^\d+$/.test(p))
    .filter((p) => {
      try {
        return (
          readlinkSync(`/proc/${p}/exe`) === binary &&
          `${readlinkSync(`/proc/${p}/cwd`)}/`.startsWith(below) &&
          !readFileSync(`/proc/${p}/stat`, 'utf8').includes(') Z ')
        );
      } catch {
        return false;
      }
    })
    .map(Number);
}
