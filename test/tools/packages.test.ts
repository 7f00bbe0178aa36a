import { spawnSync } from 'node:child_process';
import { chmodSync, copyFileSync, existsSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { which } from '../../service/process/which.js';

/**
 * test/tools/packages.sh, the first step of `npm test`, on machines that lack packages: run for
 * real with a PATH that hides some commands, as a user without root (setpriv to nobody when
 * this runs as root), and as root (root of a user namespace when the suite runs as another
 * user) with an apt-get double (the Debian archive cannot be reached from the suite's
 * namespace) that records how it was called and installs the commands.
 */
const tools = path.dirname(fileURLToPath(import.meta.url));
const listed = readFileSync(path.join(tools, 'debian-packages.txt'), 'utf8')
  .split('\n')
  .filter((l) => l.trim() && !l.startsWith('#'))
  .map((l) => l.trim().split(/\s+/) as [string, string]);

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

/** A copy of the script and its list, and a bin folder holding every listed command but `hide`. */
function machine(hide: string[], extra: string[]): { script: string; bin: string } {
  const root = mkdtempSync(path.join(os.tmpdir(), 'space-packages-'));
  dirs.push(root);
  chmodSync(root, 0o755);
  for (const f of ['packages.sh', 'debian-packages.txt']) copyFileSync(path.join(tools, f), path.join(root, f));
  const bin = path.join(root, 'bin');
  spawnSync('mkdir', ['-m', '755', bin]);
  const commands = [...listed.filter(([pkg]) => !hide.includes(pkg)).map(([, cmd]) => cmd), 'dirname', 'id', ...extra];
  for (const cmd of commands) {
    const real = which(cmd);
    if (!real) throw new Error(`${cmd} is not installed here`);
    symlinkSync(real, path.join(bin, cmd));
  }
  return { script: path.join(root, 'packages.sh'), bin };
}

/** Runs the script behind `prefix` (what makes it run as another user), with only `bin` on PATH. */
function runWith(prefix: string[], script: string, bin: string): { status: number | null; stderr: string } {
  const argv = [...prefix, '/bin/sh', script];
  const r = spawnSync(argv[0]!, argv.slice(1), { env: { PATH: bin }, encoding: 'utf8' });
  return { status: r.status, stderr: r.stderr };
}

const asUser = process.getuid?.() === 0 ? [which('setpriv')!, '--reuid=65534', '--regid=65534', '--clear-groups'] : [];
const runAsUser = (script: string, bin: string) => runWith(asUser, script, bin);

describe('npm test on a machine without some Debian packages', () => {
  it('does nothing when every package is there', () => {
    const { script, bin } = machine([], ['apt-get']);
    expect(runAsUser(script, bin)).toEqual({ status: 0, stderr: '' });
  });

  it('without root or sudo, prints the exact apt-get command and stops', () => {
    const { script, bin } = machine(['rclone', 'gh'], ['apt-get']);
    const r = runAsUser(script, bin);
    expect(r.status).toBe(1);
    expect(r.stderr).toContain('not installed: rclone gh');
    expect(r.stderr).toContain('\n  sudo apt-get update && sudo apt-get install -y -q --no-install-recommends rclone gh\n');
  });

  it('without apt-get, names the missing packages and stops', () => {
    const { script, bin } = machine(['chromium'], []);
    const r = runAsUser(script, bin);
    expect(r.status).toBe(1);
    expect(r.stderr).toContain('not on PATH (Debian package names): chromium');
  });

  it('SPACE_TEST_SKIP_PACKAGES=1 skips the check', () => {
    const { script, bin } = machine(['rclone'], ['apt-get']);
    const r = spawnSync('/bin/sh', [script], { env: { PATH: bin, SPACE_TEST_SKIP_PACKAGES: '1' }, encoding: 'utf8' });
    expect(r.status).toBe(0);
  });
});

/**
 * An apt-get double in `bin`: logs each call (its arguments and DEBIAN_FRONTEND) to apt.log and,
 * on `install`, puts the packages' commands on PATH as the real packages would; `fail` makes
 * it exit 100 as apt-get does when it cannot install.
 */
function aptDouble(bin: string, behaviour: 'installs' | 'fails'): string {
  const log = path.join(path.dirname(bin), 'apt.log');
  const commands = listed.map(([pkg, cmd]) => `    ${pkg}) printf '#!/bin/sh\\n' > "${bin}/${cmd}"; chmod 755 "${bin}/${cmd}" ;;`).join('\n');
  const script = `#!/bin/sh
echo "$* DEBIAN_FRONTEND=\${DEBIAN_FRONTEND:-}" >> "${log}"
[ "$1" = install ] || exit 0
${behaviour === 'fails' ? 'exit 100' : ''}
for pkg in "$@"; do
  case "$pkg" in
${commands}
  esac
done
`;
  writeFileSync(path.join(bin, 'apt-get'), script, { mode: 0o755 });
  return log;
}

/** As root: as is. Another user: root of a user namespace of its own (`unshare -r`); the script checks `id -u`. */
const asRoot: string[] | undefined =
  process.getuid?.() === 0 ? [] : spawnSync('unshare', ['-r', 'true']).status === 0 ? [which('unshare')!, '-r'] : undefined;
const runAsRoot = (script: string, bin: string) => runWith(asRoot!, script, bin);

describe.skipIf(asRoot === undefined)('npm test as root on a machine without some Debian packages', () => {
  it('installs the missing ones with apt-get (update, then a non-interactive install), then goes on', () => {
    const { script, bin } = machine(['rclone', 'gh'], ['env', 'chmod']);
    const log = aptDouble(bin, 'installs');
    const r = runAsRoot(script, bin);
    expect(r.status, r.stderr).toBe(0);
    expect(r.stderr).toContain('installing the Debian packages the suite needs: rclone gh');
    expect(readFileSync(log, 'utf8')).toBe('update -q DEBIAN_FRONTEND=\ninstall -y -q --no-install-recommends rclone gh DEBIAN_FRONTEND=noninteractive\n');
    expect(existsSync(path.join(bin, 'rclone')) && existsSync(path.join(bin, 'gh'))).toBe(true);
    // Run again: nothing is missing, apt-get is not called.
    expect(runAsRoot(script, bin).status).toBe(0);
    expect(readFileSync(log, 'utf8').split('\n').filter(Boolean)).toHaveLength(2);
  });

  it('when apt-get cannot install them, prints the command to run and stops', () => {
    const { script, bin } = machine(['gh'], ['env', 'chmod']);
    aptDouble(bin, 'fails');
    const r = runAsRoot(script, bin);
    expect(r.status).toBe(1);
    expect(r.stderr).toContain('apt-get could not install them; install them, then run the tests again:\n  apt-get update && apt-get install -y -q --no-install-recommends gh\n');
  });
});
