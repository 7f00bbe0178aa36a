import { createHash } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { lstat, readdir, readFile, readlink } from 'node:fs/promises';
import path from 'node:path';
import { expect } from 'vitest';
import { send, startService, type StartOptions, type TestResponse, type TestService } from '../helpers/service.js';

/**
 * Shared by the adversarial suite: a service whose every outside dependency is absent or
 * local (no CLI on PATH, no upstream, a closed local-model port), so any route can be hit
 * with anything without reaching beyond the temp HOME; and the checks every case repeats.
 */
export const MISSING_BINS = {
  SPACE_CLIA_BIN: '/nonexistent/adv-claude',
  SPACE_CLIB_BIN: '/nonexistent/adv-codex',
  SPACE_RUNTIMEA_BIN: '/nonexistent/adv-openclaw',
  SPACE_SYNC_TOOL_BIN: '/nonexistent/adv-rclone',
  SPACE_CODEHOST_CLI_BIN: '/nonexistent/adv-gh',
  SPACE_LOCALMODEL_URL: 'http://127.0.0.1:9',
};

export function startAdversary(options: StartOptions = {}): Promise<TestService> {
  return startService({ ...options, env: { ...MISSING_BINS, ...options.env } });
}

/** Where the repo lives: no answer may reveal it (a stack frame, a module path). */
const REPO = path.resolve(import.meta.dirname, '../..');

/** A refusal a client can act on: the status, `{detail: string}`, and nothing internal in it. */
export function expectClearRefusal(res: TestResponse, where = ''): void {
  expect(res.status, `${where} ${res.text.slice(0, 300)}`).toBeGreaterThanOrEqual(400);
  expect(res.status, `${where} ${res.text.slice(0, 300)}`).toBeLessThan(500);
  expectDetail(res, where);
}

/** `{detail: string}` without a stack trace, a module path or the repo's location. */
export function expectDetail(res: TestResponse, where = ''): void {
  let body: unknown;
  try {
    body = JSON.parse(res.text);
  } catch {
    throw new Error(`${where}: answer ${res.status} is not JSON: ${res.text.slice(0, 200)}`);
  }
  expect(body, where).toEqual({ detail: expect.any(String) });
  expectNoInternals((body as { detail: string }).detail, where);
}

export function expectNoInternals(text: string, where = ''): void {
  expect(text, where).not.toMatch(/\n\s+at |node_modules\/\S+\.[cm]?[jt]s|node:internal|Maximum call stack|Cannot read propert|undefined is not|is not a function/);
  expect(text, where).not.toContain(REPO);
}

/** Any answer but a 5xx; a 4xx must be a clear refusal. */
export function expectNot5xx(res: TestResponse, where = ''): void {
  expect(res.status, `${where} ${res.text.slice(0, 300)}`).toBeLessThan(500);
  if (res.status >= 400) expectDetail(res, where);
}

/** `GET /` answers, and within `withinMs` (generous: it is the service staying responsive). */
export async function expectAlive(port: number, withinMs = 1000): Promise<number> {
  const started = performance.now();
  const res = await send(port, 'GET', '/');
  const ms = performance.now() - started;
  expect(res.status).toBe(200);
  expect(res.json().status).toBe('Space API running');
  expect(ms).toBeLessThan(withinMs);
  return ms;
}

/** Every entry under `root` with its type, mode and content hash: compare before and after. */
export async function snapshot(root: string): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  const walk = async (dir: string): Promise<void> => {
    let names: string[];
    try {
      names = await readdir(dir);
    } catch {
      return;
    }
    for (const name of names.sort()) {
      const p = path.join(dir, name);
      const st = await lstat(p);
      const rel = path.relative(root, p);
      const mode = (st.mode & 0o7777).toString(8);
      if (st.isSymbolicLink()) out[rel] = `link ${await readlink(p)}`;
      else if (st.isDirectory()) {
        out[rel] = `dir ${mode}`;
        await walk(p);
      } else if (st.isFile()) out[rel] = `file ${mode} ${createHash('sha256').update(await readFile(p)).digest('hex')}`;
      else out[rel] = `special ${mode}`;
    }
  };
  await walk(root);
  return out;
}

/** Names the service's own temp files take (atomic writes, uploads): none may be left. */
export function tempFiles(tree: Record<string, string>): string[] {
  return Object.keys(tree).filter((p) => /(^|\/)\.[^/]*\.[0-9a-f]+\.tmp$|\.upload-[0-9a-f]+\.part$/.test(p));
}

export type { TestResponse, TestService };

/**
 * Live (non-zombie) processes whose parent chain leads to `root`, each as its pid and command
 * line; but for the test process's own TypeScript loader: a worker thread started from the
 * sources registers tsx, whose esbuild service lives as long as the (shared) test process.
 */
export function descendants(root = process.pid): string[] {
  const parent = new Map<number, number>();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const rest = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      if (rest[0] === 'Z' || rest[0] === 'X') continue;
      parent.set(Number(entry), Number(rest[1]));
    } catch {
      // gone meanwhile
    }
  }
  const out: string[] = [];
  for (const pid of parent.keys()) {
    for (let p = parent.get(pid); p !== undefined && p > 1; p = parent.get(p)) {
      if (p === root) {
        const command = commandOf(pid);
        if (!isTestLoader(command)) out.push(`${pid} ${command}`);
        break;
      }
    }
  }
  return out;
}

function isTestLoader(command: string): boolean {
  return /\/esbuild --service=\S+ --ping$/.test(command);
}

/** A process's command line, cut short (what a leak report names). */
function commandOf(pid: number): string {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').join(' ').trim().slice(0, 300);
  } catch {
    return '(gone)';
  }
}

/**
 * Runs `act` (the service runs in this process) and returns the most memory it kept at once,
 * in MB above what was kept before: heap and buffers measured right after a full GC, every
 * 50 ms. What is kept is what "bounded" is about; RSS would also count garbage not yet
 * collected, which depends on the machine's load more than on the code. Needs `--expose-gc`
 * (vitest.config.ts); without it the figure includes garbage and only errs high.
 */
export async function peakRetained(act: () => Promise<unknown>): Promise<number> {
  const gc = (globalThis as { gc?: () => void }).gc ?? ((): void => undefined);
  const kept = (): number => {
    gc();
    const m = process.memoryUsage();
    return m.heapUsed + m.external;
  };
  const base = kept();
  let peak = base;
  let done = false;
  const sampler = (async () => {
    while (!done) {
      peak = Math.max(peak, kept());
      await new Promise((r) => setTimeout(r, 50));
    }
  })();
  try {
    await act();
  } finally {
    done = true;
    await sampler;
  }
  return Math.round((peak - base) / 1024 / 1024);
}
