#!/usr/bin/env node
// A hostile double of the Claude Code CLI (`claude -p ... --output-format stream-json`) for the
// adversarial suite: the lines it prints are the recorded ones (test/fixtures/clia/runs/02),
// but what it does with them is picked by the prompt (with `--input-format stream-json` the
// first user message on stdin, as the service sends it; else the positional after `--`):
//   "crash"           a few deltas, then SIGKILLs itself, leaving a grandchild that ignores SIGTERM
//   "exit1"           exits 1 at once, nothing on stdout, one stderr line
//   "nonjson"         prints lines that are not JSON (and raw bytes), then exits 0
//   "hang"            prints init, then never another byte; "stubborn" also ignores SIGINT/SIGTERM
//   "flood <MB>"      <MB> megabytes of valid text deltas as fast as the pipe takes them, then the result
//   "noeol <MB>"      <MB> megabytes without a newline, then exits 0
//   "bigline <MB>"    one text delta line of <MB> megabytes, then the result
//   "badutf8"         deltas holding invalid UTF-8 bytes and a character split across writes
//   "inject"          a delta whose text tries to forge SSE frames
//   "silent <ms>"     init, <ms> of silence, then the answer
//   "slow <n>"        n small deltas 100 ms apart (a turn that runs a while), then the result
// Each run appends {pid, argv, cwd, env, stdinPrompt} as one JSON line to $FAKE_CLAUDE_LOG (as the other
// double does), so tests can check its process group and what it was given.
import { spawn } from 'node:child_process';
import { appendFileSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
const recorded = readFileSync(path.join(here, '../../fixtures/clia/runs/02-resume-text.stdout.jsonl'), 'utf8')
  .split('\n')
  .filter(Boolean)
  .map((l) => JSON.parse(l));
const argv = process.argv.slice(2);
const end = argv.indexOf('--');
const flag = (name) => {
  const i = argv.indexOf(name);
  return i === -1 || (end !== -1 && i > end) ? undefined : argv[i + 1];
};
const streamInput = flag('--input-format') === 'stream-json';
/** The first user message's text on stdin ('' if stdin ends first). */
const firstUserMessage = () =>
  new Promise((resolve) => {
    const lines = createInterface({ input: process.stdin });
    lines.on('line', (l) => {
      try {
        const msg = JSON.parse(l);
        if (msg.type === 'user') resolve(typeof msg.message?.content === 'string' ? msg.message.content : '');
      } catch {
        // not a message
      }
    });
    lines.on('close', () => resolve(''));
  });
const prompt = streamInput ? await firstUserMessage() : end === -1 ? '' : argv.slice(end + 1).join(' ');
const sessionId = flag('--resume') ?? flag('--session-id') ?? crypto.randomUUID();
if (process.env.FAKE_CLAUDE_LOG) {
  const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => /KEY|TOKEN|SECRET|SPACE_/.test(k)));
  appendFileSync(process.env.FAKE_CLAUDE_LOG, `${JSON.stringify({ pid: process.pid, argv, cwd: process.cwd(), env, ...(streamInput ? { stdinPrompt: prompt } : {}) })}\n`);
}

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const forever = () => new Promise(() => setInterval(() => undefined, 1 << 30));
const withSession = (obj) => ('session_id' in obj ? { ...obj, session_id: sessionId } : obj);
const init = withSession(recorded.find((l) => l.type === 'system' && l.subtype === 'init'));
const deltaTemplate = withSession(recorded.find((l) => l.event?.delta?.type === 'text_delta'));
const result = withSession(recorded.find((l) => l.type === 'result'));
const assistant = withSession(recorded.find((l) => l.type === 'assistant'));
/** Text sent so far, for the closing `assistant` line the real CLI prints (what /api/messages shows). */
let said = '';
const line = (obj) => `${JSON.stringify(obj)}\n`;
const delta = (text) => {
  if (said.length < 64 * 1024) said += text;
  return line({ ...deltaTemplate, event: { ...deltaTemplate.event, delta: { type: 'text_delta', text } } });
};
/** Writes and waits for the pipe when it is full (as a real program blocks on a full pipe). */
const write = (data) => (process.stdout.write(data) ? Promise.resolve() : new Promise((r) => process.stdout.once('drain', r)));
const finish = (code) => process.stdout.write('', () => process.exit(code));
const number = (word, fallback) => Number(new RegExp(`${word} (\\d+)`).exec(prompt)?.[1] ?? fallback);
const MB = 1024 * 1024;

if (prompt.includes('stubborn')) {
  process.on('SIGINT', () => undefined);
  process.on('SIGTERM', () => undefined);
}

if (prompt.includes('exit1')) {
  process.stderr.write('Error: simulated failure before any output\n', () => process.exit(1));
  await forever();
}
await write(line(init));

if (prompt.includes('crash')) {
  spawn('sh', ['-c', "trap '' TERM INT; sleep 300"], { stdio: 'ignore' });
  await write(delta('partial answer before the crash'));
  await sleep(100);
  process.kill(process.pid, 'SIGKILL');
  await forever();
}
if (prompt.includes('nonjson')) {
  await write('this is not json\n{"half": \n');
  await write(Buffer.from([0xff, 0xfe, 0x00, 0x0a, 0x1b, 0x5b, 0x33, 0x31, 0x6d, 0x0a]));
  finish(0);
  await forever();
}
if (prompt.includes('hang') || prompt.includes('stubborn')) {
  spawn('sleep', ['300'], { stdio: 'ignore' });
  await forever();
}
if (prompt.includes('flood')) {
  const text = 'f'.repeat(64 * 1024);
  for (let sent = 0; sent < number('flood', 50) * MB; sent += text.length) await write(delta(text));
}
if (prompt.includes('noeol')) {
  const chunk = Buffer.alloc(MB, 0x61);
  for (let i = 0; i < number('noeol', 100); i++) await write(chunk);
  finish(0);
  await forever();
}
if (prompt.includes('bigline')) await write(delta('B'.repeat(number('bigline', 10) * MB)));
if (prompt.includes('badutf8')) {
  const [head, tail] = delta('bad:@@:end').split('@@');
  await write(Buffer.concat([Buffer.from(head), Buffer.from([0xff, 0xc3, 0x28, 0xed, 0xa0, 0x80]), Buffer.from(tail)]));
  // "é" (c3 a9) split across two writes.
  const split = Buffer.from(delta('split:é:end'));
  const at = split.indexOf(0xc3) + 1;
  await write(split.subarray(0, at));
  await sleep(50);
  await write(split.subarray(at));
}
if (prompt.includes('inject')) await write(delta('before\n\nevent: done\ndata: {"finish_reason":"stop"}\n\nid: 999\nevent: agent-error\ndata: {}\n\nafter'));
if (prompt.includes('silent')) await sleep(number('silent', 1000));
if (prompt.includes('slow')) {
  for (let i = 0; i < number('slow', 10); i++) {
    await write(delta(`s${i} `));
    await sleep(100);
  }
}
await write(delta('ok'));
await write(line({ ...assistant, message: { ...assistant.message, content: [{ type: 'text', text: said }] } }));
await write(line(result));
finish(0);
await forever();
