// The operator WebSocket of the openclaw double (test/fakes/openclaw-gateway.mjs), as far as the
// service's gateway supervisor uses it: the handshake, and the chat endpoint turned on with
// `config.get` + `config.patch`. The frames are the recorded ones
// (test/fixtures/runtimea/2026.9.6/operator/): the `connect.challenge` event and `hello-ok`
// answer from frames.jsonl, the `config.get` / `config.patch` answers and `config.changed` from
// config-patch.jsonl, with the double's own hash of the file (`sha256:<hex>`). Like the real
// gateway it refuses a patch whose `baseHash` is not the file's hash, merges the patch (RFC 7396)
// into the file, and answers other methods `unknown method`. `operatorRefusesPatch` in
// fake-openclaw.json makes it refuse every patch (as a gateway without the method would).
// Each patch is logged as `{operator: "config.patch", raw}`.
import { createHash } from 'node:crypto';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { WebSocketServer } from 'ws';

const OPERATOR = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', 'fixtures', 'runtimea', '2026.9.6', 'operator');
const frames = (name) => readFileSync(path.join(OPERATOR, name), 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l).frame);
const handshake = frames('frames.jsonl');
const configFrames = frames('config-patch.jsonl');
const CHALLENGE = handshake.find((f) => f.event === 'connect.challenge');
const HELLO = handshake.find((f) => f.type === 'res' && f.payload?.type === 'hello-ok').payload;
const answerTo = (method) => configFrames.find((f) => f.type === 'res' && f.id === configFrames.find((r) => r.method === method).id).payload;
const CONFIG_GET = answerTo('config.get');
const CONFIG_PATCH = answerTo('config.patch');
const CONFIG_CHANGED = configFrames.find((f) => f.event === 'config.changed');

/** Serves the operator protocol on `server`'s WebSocket upgrades; `secret` null: no auth. */
export function attachOperator(server, { configFile, secret, settings, log }) {
  const wss = new WebSocketServer({ noServer: true });
  server.on('upgrade', (req, socket, head) => wss.handleUpgrade(req, socket, head, (ws) => wss.emit('connection', ws)));
  wss.on('connection', (ws) => {
    const send = (frame) => ws.send(JSON.stringify(frame));
    const fail = (id, message) => send({ type: 'res', id, ok: false, error: { code: 'INVALID_REQUEST', message } });
    send({ ...CHALLENGE, payload: { ...CHALLENGE.payload, ts: Date.now() } });
    ws.on('message', (data) => {
      const req = JSON.parse(String(data));
      const hash = fileHash(configFile);
      if (req.method === 'connect') {
        const auth = req.params?.auth ?? {};
        if (secret !== null && auth.token !== secret && auth.password !== secret) return fail(req.id, 'unauthorized: gateway token mismatch');
        return send({ type: 'res', id: req.id, ok: true, payload: HELLO });
      }
      if (req.method === 'config.get') return send({ type: 'res', id: req.id, ok: true, payload: { ...CONFIG_GET, path: configFile, hash } });
      if (req.method !== 'config.patch') return fail(req.id, `unknown method: ${req.method}`);
      if (settings().operatorRefusesPatch) return fail(req.id, 'unknown method: config.patch');
      if (req.params?.baseHash !== hash) return fail(req.id, 'config changed since last load; re-run config.get and retry');
      const current = existsSync(configFile) ? JSON.parse(readFileSync(configFile, 'utf8')) : {};
      writeFileSync(configFile, `${JSON.stringify(mergePatch(current, JSON.parse(req.params.raw)), null, 2)}\n`);
      log({ operator: 'config.patch', raw: req.params.raw });
      const next = fileHash(configFile);
      send({ ...CONFIG_CHANGED, payload: { ...CONFIG_CHANGED.payload, path: configFile, hash: next, ts: Date.now() } });
      send({ type: 'res', id: req.id, ok: true, payload: { ...CONFIG_PATCH, path: configFile, hash: next } });
    });
  });
}

function fileHash(file) {
  return `sha256:${createHash('sha256').update(existsSync(file) ? readFileSync(file) : '').digest('hex')}`;
}

/** RFC 7396 JSON merge patch. */
function mergePatch(target, patch) {
  if (patch === null || typeof patch !== 'object' || Array.isArray(patch)) return patch;
  const out = target !== null && typeof target === 'object' && !Array.isArray(target) ? { ...target } : {};
  for (const [key, value] of Object.entries(patch)) {
    if (value === null) delete out[key];
    else out[key] = mergePatch(out[key], value);
  }
  return out;
}
