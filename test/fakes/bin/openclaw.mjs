#!/usr/bin/env node
// A double of the `openclaw` CLI for the gateway supervisor and runtimea adapter tests (the
// real one needs Node 24 and ~10-20 s to start). Commands, as the service runs them:
//   gateway run --port P --bind loopback [--auth token] --allow-unconfigured
//       serves the recorded gateway (../openclaw-gateway.mjs); the bearer it takes is resolved
//       as OpenClaw 2026.9.6 does: gateway.auth in openclaw.json first, then
//       OPENCLAW_GATEWAY_TOKEN / _PASSWORD; mode = --auth, else gateway.auth.mode, else password
//       when one is set, else token; records itself as the state folder's owner in
//       <state dir>/tmp/openclaw-<uid>/gateway.state.lock like OpenClaw 2026.9;
//       exits 78 with the recorded message when a legacy sessions.json exists (SQLite mode),
//       as openclaw 2026.9.6 does
//   config set <path> <json> --strict-json     writes <state dir>/openclaw.json
//   doctor --fix --yes --non-interactive       imports a legacy sessions.json
// Every invocation is logged to <state dir>/fake-openclaw.log.jsonl.
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { doctorFix, legacyStores, logInvocation, settings, startGateway } from '../openclaw-gateway.mjs';

const stateDir = process.env.OPENCLAW_STATE_DIR ?? path.join(process.env.HOME ?? '/tmp', '.openclaw');
const args = process.argv.slice(2);
logInvocation(stateDir, { argv: args, token: process.env.OPENCLAW_GATEWAY_TOKEN ? 'set' : null, noRespawn: process.env.OPENCLAW_NO_RESPAWN ?? null, path0: (process.env.PATH ?? '').split(':')[0], provb: process.env.OPENAI_API_KEY ?? null });
const config = settings(stateDir);

if (args[0] === 'gateway' && args[1] === 'run') {
  const port = Number(args[args.indexOf('--port') + 1]);
  const legacy = config.store === 'sqlite' ? legacyStores(stateDir) : [];
  if (legacy.length) {
    const recorded = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', '..', 'fixtures', 'runtimea', '2026.9.6', 'legacy-store-refusal', 'gateway-run.txt');
    process.stdout.write(readFileSync(recorded, 'utf8'));
    setTimeout(() => process.exit(78), 50);
  } else if (config.exitOnStart !== undefined) {
    process.stderr.write(`fake gateway: exiting with ${config.exitOnStart} as configured\n`);
    setTimeout(() => process.exit(config.exitOnStart), 50);
  } else {
    process.stdout.write('\x1b[36m[gateway]\x1b[39m loading configuration…\n');
    setTimeout(() => {
      const lock = path.join(stateDir, 'tmp', `openclaw-${process.getuid()}`, 'gateway.state.lock');
      const server = startGateway({
        stateDir,
        port,
        token: bearer(args),
        onListening: (p) => {
          // The state folder's owner, as OpenClaw 2026.9 records it (padded after the JSON).
          mkdirSync(path.dirname(lock), { recursive: true });
          writeFileSync(lock, `${JSON.stringify({ pid: process.pid, port: p, stateDir, configPath: path.join(stateDir, 'openclaw.json') }, null, 2)}\n\t \t`);
          process.stdout.write(`[gateway] http server listening on 127.0.0.1:${p}\n`);
        },
      });
      process.on('SIGTERM', () => {
        rmSync(lock, { force: true });
        process.stdout.write('[gateway] shutdown completed cleanly\n');
        server.closeAllConnections();
        server.close(() => process.exit(0));
      });
    }, config.startMs);
  }
} else if (args[0] === 'config' && args[1] === 'set') {
  const file = process.env.OPENCLAW_CONFIG_PATH ?? path.join(stateDir, 'openclaw.json');
  const current = existsSync(file) ? JSON.parse(readFileSync(file, 'utf8')) : {};
  const keys = args[2].split('.');
  let node = current;
  for (const key of keys.slice(0, -1)) node = node[key] ??= {};
  node[keys.at(-1)] = JSON.parse(args[3]);
  mkdirSync(path.dirname(file), { recursive: true });
  writeFileSync(file, `${JSON.stringify(current, null, 2)}\n`);
  process.stdout.write(`Updated ${args[2]}.\n`);
} else if (args[0] === 'doctor') {
  if (config.doctorFixes) doctorFix(stateDir);
  process.stdout.write('Doctor complete.\n');
} else {
  process.stderr.write(`fake openclaw: unsupported command ${args.join(' ')}\n`);
  process.exit(2);
}

/** The bearer the gateway takes (null: auth mode none). */
function bearer(argv) {
  const file = process.env.OPENCLAW_CONFIG_PATH ?? path.join(stateDir, 'openclaw.json');
  const auth = (existsSync(file) ? JSON.parse(readFileSync(file, 'utf8')).gateway?.auth : undefined) ?? {};
  // Its environment over the state dir's .env, as OpenClaw reads them; env SecretRefs resolved there.
  const dotenv = existsSync(path.join(stateDir, '.env')) ? Object.fromEntries(readFileSync(path.join(stateDir, '.env'), 'utf8').split('\n').filter((l) => l.includes('=')).map((l) => [l.slice(0, l.indexOf('=')), l.slice(l.indexOf('=') + 1)])) : {};
  const env = { ...dotenv, ...process.env };
  const value = (v) => (typeof v === 'string' ? v : v?.source === 'env' ? env[v.id] : undefined) || undefined;
  const token = value(auth.token) || env.OPENCLAW_GATEWAY_TOKEN;
  const password = value(auth.password) || env.OPENCLAW_GATEWAY_PASSWORD;
  const mode = (argv.includes('--auth') ? argv[argv.indexOf('--auth') + 1] : undefined) ?? auth.mode ?? (password ? 'password' : 'token');
  return mode === 'none' ? null : mode === 'password' ? password : token;
}
