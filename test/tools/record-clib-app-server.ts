/**
 * Records `codex app-server` transcripts for the clib fixtures (test/fixtures/clib/app-server/)
 * from the real, pinned codex against the loopback fake Responses server. Run inside the
 * loopback-only namespace:
 *
 *   unshare -n sh -c 'ip link set lo up && SPACE_TEST_NETNS=1 npx tsx test/tools/record-clib-app-server.ts'
 *
 * Transcript format (as in shared/fixtures/runtimes/clib/app-server/): one JSON-RPC message per
 * line; lines the client sent start with `>> `. Temp paths are rewritten to the shared
 * fixtures' /home/user/rt-codex/fx/{home,proj} so the files do not change from run to run
 * for that reason alone.
 */
import { spawn } from 'node:child_process';
import { mkdir, mkdtemp, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { startFakeResponses } from '../fakes/openai-responses.js';
import { codexConfigToml } from '../fakes/codex-config.js';
import { realProgram } from '../helpers/programs.js';

const OUT = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', 'fixtures', 'clib', 'app-server');
const codex = realProgram('codex');
if (!codex) throw new Error('run inside the test namespace (SPACE_TEST_NETNS=1)');

const fake = await startFakeResponses({ apiKey: 'sk-test-recorder', slowMs: 4000 });
const home = await mkdtemp(path.join(os.tmpdir(), 'rec-clib-'));
const codexHome = path.join(home, '.codex');
const proj = path.join(home, 'proj');
await mkdir(codexHome, { recursive: true });
await mkdir(proj, { recursive: true });
await writeFile(path.join(codexHome, 'config.toml'), codexConfigToml(fake.url));

interface Session {
  lines: string[];
  request(method: string, params: unknown): Promise<any>;
  notify(method: string): void;
  waitFor(method: string): Promise<any>;
  close(): Promise<void>;
}

function open(): Session {
  const child = spawn(codex!, ['app-server'], {
    cwd: proj,
    env: { PATH: process.env.PATH, HOME: home, CODEX_HOME: codexHome, CODEX_API_KEY: 'sk-test-recorder' },
    stdio: ['pipe', 'pipe', 'ignore'],
  });
  const lines: string[] = [];
  const pending = new Map<number, (m: any) => void>();
  const watchers: Array<{ method: string; resolve: (m: any) => void }> = [];
  let buf = '';
  let next = 1;
  child.stdout.on('data', (d: Buffer) => {
    buf += d.toString('utf8');
    let i;
    while ((i = buf.indexOf('\n')) >= 0) {
      const line = buf.slice(0, i);
      buf = buf.slice(i + 1);
      if (!line.trim()) continue;
      lines.push(line);
      const msg = JSON.parse(line);
      if (msg.id !== undefined && !msg.method) pending.get(msg.id)?.(msg);
      if (msg.id !== undefined && msg.method) send({ id: msg.id, result: { decision: 'decline' } });
      for (const w of watchers.filter((w) => w.method === msg.method)) {
        watchers.splice(watchers.indexOf(w), 1);
        w.resolve(msg);
      }
    }
  });
  const send = (m: unknown): void => {
    const s = JSON.stringify(m);
    lines.push(`>> ${s}`);
    child.stdin.write(`${s}\n`);
  };
  return {
    lines,
    request: (method, params) =>
      new Promise((resolve) => {
        const id = next++;
        pending.set(id, resolve);
        send({ id, method, params });
      }),
    notify: (method) => send({ method }),
    waitFor: (method) => new Promise((resolve) => watchers.push({ method, resolve })),
    close: () =>
      new Promise((resolve) => {
        child.once('exit', () => resolve());
        child.stdin.end();
      }),
  };
}

async function begin(s: Session): Promise<void> {
  await s.request('initialize', { clientInfo: { name: 'space', title: 'Space', version: '0.1.0' }, capabilities: null });
  s.notify('initialized');
}

const threadParams = { cwd: proj, approvalPolicy: 'never', sandbox: 'workspace-write' };
const turnInput = (text: string) => [{ type: 'text', text, text_elements: [] }];

async function turn(name: string, text: string, resume?: string): Promise<string> {
  const s = open();
  await begin(s);
  const started = resume ? await s.request('thread/resume', { threadId: resume, ...threadParams }) : await s.request('thread/start', threadParams);
  const threadId: string | undefined = started.result?.thread?.id;
  if (threadId) {
    const done = s.waitFor('turn/completed');
    await s.request('turn/start', { threadId, input: turnInput(text) });
    await done;
  }
  await s.close();
  await save(name, s.lines);
  return threadId ?? '';
}

async function interrupted(name: string): Promise<string> {
  const s = open();
  await begin(s);
  const started = await s.request('thread/start', threadParams);
  const threadId: string = started.result.thread.id;
  const done = s.waitFor('turn/completed');
  const reasoned = s.waitFor('item/completed');
  const turnStart = await s.request('turn/start', { threadId, input: turnInput('[[slow]] take your time') });
  await reasoned;
  await new Promise((r) => setTimeout(r, 800));
  await s.request('turn/interrupt', { threadId, turnId: turnStart.result.turn.id });
  await done;
  await s.close();
  await save(name, s.lines);
  return threadId;
}

async function save(name: string, lines: string[]): Promise<void> {
  const text = lines.join('\n').split(proj).join('/home/user/rt-codex/fx/proj').split(home).join('/home/user/rt-codex/fx/home');
  await mkdir(OUT, { recursive: true });
  await writeFile(path.join(OUT, `${name}.transcript.txt`), `${text}\n`);
  console.log(`recorded ${name} (${lines.length} lines)`);
}

const first = await turn('new-text', 'Say hello');
await turn('resume-text', 'Say hello again', first);
const shell = await turn('tool-shell', '[[shell]] Run a shell command and tell me the output');
await turn('resume-tool-shell', 'And once more, plain', shell);
await turn('err-401', '[[401]] hi');
await turn('err-500', '[[500]] hi');
await turn('resume-unknown-thread', 'hi', '00000000-0000-7000-8000-000000000000');
const aborted = await interrupted('interrupt');
await turn('resume-after-interrupt', 'Are you there?', aborted);
await fake.close();

// A model that stays silent for 22 s before its answer: longer than the 20 s heartbeat interval.
const slowFake = await startFakeResponses({ apiKey: 'sk-test-recorder', slowMs: 22_000 });
await writeFile(path.join(codexHome, 'config.toml'), codexConfigToml(slowFake.url));
await turn('slow-22s', '[[slow]] answer after a long silence');
await slowFake.close();
