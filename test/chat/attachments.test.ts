import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { resolveAttachments } from '../../service/chat/attachments.js';
import type { Runtime } from '../../service/runtimes/runtime.js';
import { startFakeResponses, type FakeResponses } from '../fakes/openai-responses.js';
import { answered, bytes, upload } from '../helpers/multipart.js';
import { realProgram } from '../helpers/programs.js';
import { startService, type TestService } from '../helpers/service.js';
import { codexLaneHome } from '../helpers/setups.js';
import { openSse } from '../helpers/sse.js';

/**
 * Attachments on POST /api/chat/prompt over HTTP: every refusal (outside $HOME, missing,
 * not an image it claims to be, too large, images to a runtime that cannot take them)
 * answered before anything starts; with the real codex (loopback namespace only), an image
 * reaches the model double as an image input and other files are named by path, and
 * /api/messages shows what was attached (name, path, type), never the bytes.
 */
const codex = realProgram('codex');
// A valid 1x1 PNG.
const PNG = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==', 'base64');

let svc: TestService;
let fake: FakeResponses;
let outside: string;

beforeAll(async () => {
  fake = await startFakeResponses({ apiKey: 'sk-provb-attach' });
  svc = await startService({ env: { SPACE_CLIB_BIN: codex ?? '/nonexistent/codex', SPACE_CHAT_MAX_IMAGE_BYTES: '4096' } });
  const codexHome = svc.service.ctx.config.paths.codexHome;
  // The user's Codex home as they make it: `codex login` (here with an API key), then their own
  // provider lines in config.toml.
  if (codex) await codexLaneHome({ codex, home: svc.home, codexHome, responsesUrl: fake.url, provbKey: 'sk-provb-attach' });
  await mkdir(path.join(svc.home, 'pics'), { recursive: true });
  await writeFile(path.join(svc.home, 'pics', 'shot.png'), PNG);
  await writeFile(path.join(svc.home, 'pics', 'notes.txt'), 'some notes\n');
  await writeFile(path.join(svc.home, 'pics', 'fake.png'), 'not a png at all');
  await writeFile(path.join(svc.home, 'pics', 'old.bmp'), Buffer.from('BM\x00\x00', 'latin1'));
  await writeFile(path.join(svc.home, 'pics', 'big.png'), Buffer.concat([PNG, Buffer.alloc(8192)]));
  outside = await mkdtemp(path.join(os.tmpdir(), 'space-attach-outside-'));
  await writeFile(path.join(outside, 'secret.png'), PNG);
});
afterAll(async () => {
  await svc?.close();
  await fake?.close();
  await rm(outside, { recursive: true, force: true });
});

const prompt = (body: Record<string, unknown>) => svc.post('/api/chat/prompt', body);
const pic = (name: string): string => path.join(svc.home, 'pics', name);

describe('attachment refusals: answered at once, nothing starts', () => {
  const cases: Array<[string, () => unknown, number, string]> = [
    ['outside $HOME', () => [{ path: path.join(outside, 'secret.png') }], 403, 'Access denied'],
    ['a symlink under $HOME pointing outside', () => [{ path: pic('link.png') }], 403, 'Access denied'],
    ['missing', () => [{ path: pic('nope.png') }], 404, 'File not found'],
    ['a folder', () => [{ path: path.join(svc.home, 'pics') }], 404, 'File not found'],
    ['an unknown file_id', () => [{ file_id: '0123456789abcdef' }], 404, 'File not found'],
    ['a relative path', () => [{ path: 'pics/shot.png' }], 400, 'Attachment path must be absolute'],
    ['not an array', () => ({ path: pic('shot.png') }), 400, 'attachments must be an array of {path} or {file_id}'],
    ['neither path nor file_id', () => [{ name: 'x' }], 400, 'Each attachment must be {path} (absolute) or {file_id} (of an upload)'],
    ['a .png that is not one', () => [{ path: pic('fake.png') }], 400, 'Unsupported image: fake.png (not a valid image/png file; PNG, JPEG, GIF or WebP)'],
    ['an image type models do not take', () => [{ path: pic('old.bmp') }], 400, 'Unsupported image: old.bmp (image/bmp; PNG, JPEG, GIF or WebP)'],
    ['an image over the size limit', () => [{ path: pic('big.png') }], 400, 'Image too large: big.png (8262 bytes; at most 4096)'],
  ];

  beforeAll(async () => {
    const { symlink } = await import('node:fs/promises');
    await symlink(path.join(outside, 'secret.png'), pic('link.png'));
  });

  for (const [what, attachments, status, detail] of cases) {
    it(`${what}: ${status} ${detail}`, async () => {
      const before = fake.requests.length;
      const res = await prompt({ text: 'look', agent_name: 'clib', attachments: attachments() });
      expect(res.status).toBe(status);
      expect(res.json()).toEqual({ detail });
      expect(fake.requests.length).toBe(before);
    });
  }

  it('the legacy chat takes attachments under the same rules', async () => {
    const res = await svc.post('/ask_question', { project_name: 'legacy-attach', question: 'look', attachments: [{ path: path.join(outside, 'secret.png') }] });
    expect(res.status).toBe(403);
    expect(res.json()).toEqual({ detail: 'Access denied' });
  });

  it('an image for a runtime that takes text only is 400 (every runtime registered takes images now; the contract check stays)', async () => {
    const clia = svc.service.ctx.runtimes.get('clia_code')!;
    expect(clia.inputs).toEqual({ images: true });
    const textOnly: Runtime = { ...clia, inputs: undefined };
    const refused = resolveAttachments(svc.service.ctx, [{ path: pic('shot.png') }], textOnly);
    await expect(refused).rejects.toMatchObject({ status: 400, message: 'The clia_code runtime cannot take images yet: shot.png' });
    // A file that is not an image is named by path, for any runtime.
    expect(await resolveAttachments(svc.service.ctx, [{ path: pic('notes.txt') }], textOnly)).toEqual([expect.objectContaining({ kind: 'file', name: 'notes.txt' })]);
  });
});

describe.skipIf(!codex)('attachments on the real codex', () => {
  it('an image reaches the model as an image input; a text file is named by path; /api/messages lists both', async () => {
    const res = await prompt({ text: 'What is in the picture?', agent_name: 'clib', agent_id: 'attach', attachments: [{ path: pic('shot.png') }, { path: pic('notes.txt') }] });
    expect(res.status).toBe(200);
    const { stream_id, session_id } = res.json();
    const sse = await openSse(svc.port, `/api/chat/stream/${stream_id}`);
    await sse.ended;
    expect(sse.named().at(-1)).toMatchObject({ event: 'done', data: { finish_reason: 'stop' } });
    const request = fake.requests.at(-1)!;
    expect(request.images).toEqual([expect.stringMatching(/^data:image\/png;base64,/)]);
    expect(request.userTexts.join('\n')).toContain(`What is in the picture?\n\nAttached files:\n- ${pic('notes.txt')}`);
    const user = (await svc.get(`/api/messages/${session_id}`)).json().messages[0];
    expect(user).toMatchObject({ role: 'user', text: 'What is in the picture?' });
    expect(user.attachments).toEqual([
      { name: 'shot.png', path: pic('shot.png'), mime: 'image/png' },
      { name: 'notes.txt', path: pic('notes.txt'), mime: 'text/plain' },
    ]);
  });

  it('{file_id} of an earlier upload', async () => {
    const up = answered(await upload(svc.port, { parts: [{ name: 'file', filename: 'pasted.png', contentType: 'image/png', data: bytes(PNG) }] }));
    expect(up.status).toBe(200);
    const { file_id, path: stored } = up.json();
    const res = await prompt({ text: 'And this one?', agent_name: 'clib', agent_id: 'attach', attachments: [{ file_id }] });
    expect(res.status).toBe(200);
    const sse = await openSse(svc.port, `/api/chat/stream/${res.json().stream_id}`);
    await sse.ended;
    expect(fake.requests.at(-1)!.images).toEqual([expect.stringMatching(/^data:image\/png;base64,/)]);
    const user = (await svc.get(`/api/messages/${res.json().session_id}`)).json().messages[0];
    expect(user.attachments).toEqual([{ name: 'pasted.png', path: stored, mime: 'image/png' }]);
  });
});
