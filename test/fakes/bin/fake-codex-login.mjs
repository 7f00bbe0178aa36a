// A fake `codex` for `codex login --device-auth`, replaying what the real CLI 0.169.0 printed
// (test/fixtures/bootstrap/codex-device-auth.*, from shared/fixtures/runtimes/clib/login/):
// the device prompt on stdout, then, once the user approves, the recorded auth.json written to
// $CODEX_HOME (mode 0600) and "Successfully logged in" on stderr, exit 0.
// $HOME/.fake-codex.json sets the scenario: "ok" | "denied" | "no-network" | "silent" | "no-auth-file".
// The test approves by creating $HOME/.fake-codex-approve. The fake writes its pid to
// $HOME/.fake-codex.pid and keeps a `sleep` child in its process group.
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';

const fixtures = path.join(import.meta.dirname, '..', '..', 'fixtures', 'bootstrap');
const fixture = (name) => readFileSync(path.join(fixtures, name), 'utf8');
const home = process.env.HOME ?? '/';
const codexHome = process.env.CODEX_HOME ?? path.join(home, '.codex');
const control = (() => {
  try {
    return JSON.parse(readFileSync(path.join(home, '.fake-codex.json'), 'utf8'));
  } catch {
    return {};
  }
})();
const scenario = control.scenario ?? 'ok';
writeFileSync(path.join(home, '.fake-codex.pid'), String(process.pid));
writeFileSync(path.join(home, '.fake-codex.argv'), JSON.stringify({ argv: process.argv.slice(2), CODEX_HOME: process.env.CODEX_HOME, env: Object.keys(process.env) }));
const sleeper = spawn('sleep', ['300'], { stdio: 'ignore' });

const [command, flag] = process.argv.slice(2);
if (command !== 'login' || flag !== '--device-auth') {
  process.stderr.write(`fake codex: only login --device-auth is faked (got ${process.argv.slice(2).join(' ')})\n`);
  process.exit(2);
}
const warning = fixture('codex-device-auth.stderr.txt').split('\n')[0] + '\n';
process.stderr.write(warning);
if (scenario === 'no-network') {
  process.stderr.write(fixture('codex-device-auth-no-network.stderr.txt').split('\n').slice(1).join('\n'));
  sleeper.kill();
  process.exit(1);
}
if (scenario !== 'silent') process.stdout.write(fixture('codex-device-auth.stdout.txt'));

const poll = setInterval(() => {
  if (scenario === 'silent' || !existsSync(path.join(home, '.fake-codex-approve'))) return;
  clearInterval(poll);
  if (scenario === 'denied') {
    process.stderr.write(fixture('codex-device-auth-denied.stderr.txt').split('\n').slice(1).join('\n'));
    sleeper.kill();
    process.exit(1);
  }
  if (scenario === 'ok') {
    mkdirSync(codexHome, { recursive: true });
    writeFileSync(path.join(codexHome, 'auth.json'), fixture('codex-device-auth.auth.json'), { mode: 0o600 });
  }
  process.stderr.write('Successfully logged in\n');
  sleeper.kill();
  process.exit(0);
}, 50);
