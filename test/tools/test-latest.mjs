#!/usr/bin/env node
// `npm run test:latest`: the real-program lanes (test/tools/lanes.mjs) against the newest
// published Claude Code, Codex and OpenClaw, to see a runtime's drift before users do. The
// versions come from `npm view <package> version`; they are installed into the programs cache
// beside the pinned ones (programs.json, what `npm test` keeps running) and handed to the lanes
// through SPACE_TEST_PROGRAM_VERSIONS. Prints the versions before and after the run; exits with
// the run's status. Extra arguments go to vitest (e.g. a file filter).
import { execFileSync, spawnSync } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { laneFiles } from './lanes.mjs';
import { PINNED } from './programs.mjs';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
const DRIFTING = ['claude', 'codex', 'openclaw'];

// The lanes need the loopback-only namespace (run-tests.sh: `unshare -n` as root, a user
// namespace otherwise); without it they would all be skipped.
if (spawnSync('unshare', ['-n', 'true']).status !== 0 && spawnSync('unshare', ['-rn', 'true']).status !== 0) {
  console.error('test:latest: the real-program lanes need a network namespace (unshare as root, or user namespaces); nothing was run');
  process.exit(1);
}

const versions = DRIFTING.map((name) => {
  const pkg = PINNED[name].package;
  const latest = execFileSync('npm', ['view', pkg, 'version'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] }).trim();
  if (!/^[0-9A-Za-z.+-]+$/.test(latest)) throw new Error(`npm view ${pkg} version answered ${JSON.stringify(latest)}`);
  return { name, pkg, latest, pinned: PINNED[name].version };
});
const summary = () => versions.map((v) => `  ${v.name}: ${v.pkg}@${v.latest} (pinned ${v.pinned}${v.latest === v.pinned ? ', the same' : ''})`).join('\n');

const files = laneFiles(root);

console.log(`test:latest: the newest published versions\n${summary()}\nlanes: ${files.join(' ')}`);
const env = { ...process.env, SPACE_TEST_PROGRAM_VERSIONS: versions.map((v) => `${v.name}@${v.latest}`).join(',') };
const run = spawnSync('sh', [path.join(root, 'test', 'tools', 'run-tests.sh'), ...files, ...process.argv.slice(2)], { cwd: root, env, stdio: 'inherit' });
const status = run.status ?? 1;
console.log(`test:latest: ${status === 0 ? 'passed' : 'FAILED'} with\n${summary()}`);
process.exit(status);
