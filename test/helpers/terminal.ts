import { spawn } from 'node:child_process';
import type { Ran } from './setups.js';

/**
 * A program run the way a user runs it in a terminal (not through the service): in `cwd`,
 * with the user's environment, stdin closed. Async: the model doubles answer from this process.
 * Rejects unless it exits 0.
 */
export function runInTerminal(command: string, args: readonly string[], env: NodeJS.ProcessEnv, cwd: string, timeoutMs = 120_000): Promise<Ran> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { env, cwd, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (c: string) => (stdout += c));
    child.stderr.setEncoding('utf8').on('data', (c: string) => (stderr += c));
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      if (code === 0) resolve({ code, stdout, stderr });
      else reject(new Error(`${[command, ...args].join(' ')} exited with ${code}: ${stderr.slice(-2000)}`));
    });
  });
}
