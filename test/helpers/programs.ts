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
