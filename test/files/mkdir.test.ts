import { existsSync, readFileSync } from 'node:fs';
import { chmod, mkdir, mkdtemp, readdir, readFile, rm, stat, symlink, utimes, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeDirectory } from '../../service/files/mkdir.js';
import { startService, type TestService } from '../helpers/service.js';

const templateDir = path.resolve(import.meta.dirname, '../../templates/project');

let svc: TestService;
let home: string;
let projects: string;
beforeAll(async () => {
  svc = await startService();
  home = svc.home;
  projects = path.join(home, 'space-projects');
});
afterAll(() => svc.close());

const mkdirApi = (body: unknown) => svc.post('/api/files/mkdir', body);

/** Every file below `dir`, as sorted relative paths. */
async function tree(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { recursive: true, withFileTypes: true });
  return entries
    .filter((e) => e.isFile())
    .map((e) => path.relative(dir, path.join(e.parentPath, e.name)))
    .sort();
}

async function sourceFile(name: string, content: string, mode: number, mtime: Date): Promise<string> {
  const file = path.join(home, 'sources', name);
  await mkdir(path.dirname(file), { recursive: true });
  await writeFile(file, content);
  await chmod(file, mode);
  await utimes(file, mtime, mtime);
  return file;
}

describe('POST /api/files/mkdir (plain)', () => {
  it('creates the directory with its parents', async () => {
    const target = path.join(home, 'a', 'b', 'c');
    const res = await mkdirApi({ path: target });
    expect(res.status).toBe(200);
    expect(res.json()).toEqual({ path: target, name: 'c', copied: [] });
    expect((await stat(target)).isDirectory()).toBe(true);
  });

  it('copies files with modification time and permissions preserved; copied lists basenames', async () => {
    const mtime = new Date('2021-03-04T05:06:07.000Z');
    const one = await sourceFile('one.sh', '#!/bin/sh\necho one\n', 0o751, mtime);
    const two = await sourceFile('two.txt', 'two', 0o640, new Date('2019-01-01T00:00:00.000Z'));
    const target = path.join(home, 'with-files');
    const res = await mkdirApi({ path: target, files: [one, two] });
    expect(res.json()).toEqual({ path: target, name: 'with-files', copied: ['one.sh', 'two.txt'] });
    const copied = await stat(path.join(target, 'one.sh'));
    expect(copied.mode & 0o7777).toBe(0o751);
    expect(copied.mtime.getTime()).toBe(mtime.getTime());
    expect((await stat(path.join(target, 'two.txt'))).mode & 0o7777).toBe(0o640);
    expect(await readFile(path.join(target, 'one.sh'), 'utf8')).toBe('#!/bin/sh\necho one\n');
    expect((await stat(one)).mode & 0o7777).toBe(0o751);
  });

  it('copies a name only once when two entries share a basename', async () => {
    const first = await sourceFile('dup.txt', 'first', 0o644, new Date());
    const second = path.join(home, 'sources', 'other', 'dup.txt');
    await mkdir(path.dirname(second), { recursive: true });
    await writeFile(second, 'second');
    const target = path.join(home, 'dups');
    expect((await mkdirApi({ path: target, files: [first, second] })).json().copied).toEqual(['dup.txt']);
    expect(await readFile(path.join(target, 'dup.txt'), 'utf8')).toBe('first');
  });

  it('an existing path is 409 Already exists, whatever else is wrong with the request', async () => {
    await mkdir(path.join(home, 'taken'));
    await writeFile(path.join(home, 'taken-file'), 'x');
    for (const body of [
      { path: path.join(home, 'taken') },
      { path: path.join(home, 'taken-file') },
      { path: '/etc' }, // exists and is outside: the spec checks existence first
      { path: path.join(home, 'taken'), scaffold: true, files: ['/etc/hosts'] },
    ]) {
      const res = await mkdirApi(body);
      expect({ body, status: res.status, json: res.json() }).toEqual({ body, status: 409, json: { detail: 'Already exists' } });
    }
  });

  it('validation order: 403 before the scaffold 400, the scaffold 400 before files checks', async () => {
    const outside = await mkdirApi({ path: '/tmp/space-test-never-created', scaffold: true, files: ['/etc/hosts'] });
    expect(outside.status).toBe(403);
    expect(outside.json()).toEqual({ detail: 'Access denied' });

    const wrongParent = await mkdirApi({ path: path.join(home, 'elsewhere', 'proj'), scaffold: true, files: ['/etc/hosts'] });
    expect(wrongParent.status).toBe(400);
    expect(wrongParent.json()).toEqual({ detail: `Scaffold path must be a direct child of the projects root (${projects})` });

    const nested = await mkdirApi({ path: path.join(projects, 'a', 'b'), scaffold: true });
    expect(nested.status).toBe(400);

    expect(existsSync('/tmp/space-test-never-created')).toBe(false);
    expect(existsSync(path.join(home, 'elsewhere'))).toBe(false);
    expect(existsSync(projects)).toBe(false);
  });

  it('files entries are checked in order: 403 Access denied: <path>, 404 File not found: <path>', async () => {
    const ok = await sourceFile('ok.txt', 'ok', 0o644, new Date());
    const missing = path.join(home, 'sources', 'missing.txt');
    const dir = path.join(home, 'sources');
    const target = path.join(home, 'never');
    const cases: Array<[string[], number, string]> = [
      [['/etc/hosts'], 403, 'Access denied: /etc/hosts'],
      [[ok, missing, '/etc/hosts'], 404, `File not found: ${missing}`],
      [[ok, '/etc/hosts', missing], 403, 'Access denied: /etc/hosts'],
      [[dir], 404, `File not found: ${dir}`],
      [[`${home}/sources/../../etc/passwd`], 403, `Access denied: ${home}/sources/../../etc/passwd`],
      [[`${ok}/below`], 404, `File not found: ${ok}/below`],
    ];
    for (const [files, status, detail] of cases) {
      const res = await mkdirApi({ path: target, files });
      expect({ files, status: res.status, body: res.json() }).toEqual({ files, status, body: { detail } });
    }
    expect(existsSync(target)).toBe(false);
  });

  it('malformed fields are 400 before anything else', async () => {
    const target = path.join(home, 'shape');
    const cases: Array<[Record<string, unknown>, string]> = [
      [{ path: target, files: '/etc/hosts' }, 'files must be an array of strings'],
      [{ path: target, files: [1] }, 'files must be an array of strings'],
      [{ path: target, files: ['relative.txt'] }, 'files entry must be absolute'],
      [{ path: target, scaffold: 'yes' }, 'scaffold must be a boolean'],
      [{ path: target, scaffold: true, display_name: 5 }, 'display_name must be a string'],
      [{ path: target, scaffold: true, description: {} }, 'description must be a string'],
      [{ files: ['/etc/hosts'] }, 'Missing path'],
    ];
    for (const [body, detail] of cases) {
      const res = await mkdirApi(body);
      expect({ body, status: res.status, json: res.json() }).toEqual({ body, status: 400, json: { detail } });
    }
    expect(existsSync(target)).toBe(false);
  });

  it('a path below a regular file is 404 Not a directory', async () => {
    await writeFile(path.join(home, 'plain-file'), 'x');
    const res = await mkdirApi({ path: path.join(home, 'plain-file', 'sub') });
    expect(res.status).toBe(404);
    expect(res.json()).toEqual({ detail: 'Not a directory' });
  });
});

describe('POST /api/files/mkdir with scaffold: true', () => {
  it('creates the project from the bundled template, file by file', async () => {
    const before = Date.now();
    const res = await mkdirApi({ path: path.join(projects, 'My Big Project!'), scaffold: true, description: 'Plans for Q3' });
    const after = Date.now();
    const dir = path.join(projects, 'my-big-project');
    expect(res.status).toBe(200);
    expect(res.json()).toEqual({ path: dir, name: 'my-big-project', copied: [] });
    expect(existsSync(path.join(projects, 'My Big Project!'))).toBe(false);

    // The spec's scaffolded tree, plus the schema file project.json refers to.
    const expected = [
      'AGENTS.md',
      'CLIA.md',
      'PROJECT.md',
      'OBJECTIVES.md',
      'PLAN.md',
      'PROGRESS.md',
      'memory/semantic/preferences.md',
      'memory/semantic/project-facts.md',
      'memory/semantic/constraints.md',
      'memory/episodic/README.md',
      'memory/procedural/README.md',
      'memory/working/.gitkeep',
      '.space/project.json',
      '.space/project.schema.json',
      '.space/todos.json',
      '.space/stats.json',
      '.space/timeline.jsonl',
      '.space/activity.json',
      '.space/sync.json',
      '.space/peers.json',
      '.space/sessions/sessionslist.json',
    ].sort();
    expect(await tree(dir)).toEqual(expected);
    expect(await tree(templateDir)).toEqual(expected);

    for (const file of expected.filter((f) => f !== '.space/project.json')) {
      expect({ file, content: await readFile(path.join(dir, file), 'utf8') }).toEqual({ file, content: await readFile(path.join(templateDir, file), 'utf8') });
    }
    expect(JSON.parse(await readFile(path.join(dir, '.space/sessions/sessionslist.json'), 'utf8'))).toEqual({});
    for (const file of expected.filter((f) => f.startsWith('.space/') && f.endsWith('.json'))) {
      expect(() => JSON.parse(readFileSync(path.join(dir, file), 'utf8'))).not.toThrow();
    }
    expect((await readFile(path.join(dir, 'CLIA.md'), 'utf8')).trim().split('\n')).toHaveLength(1);
    expect(await readFile(path.join(dir, 'CLIA.md'), 'utf8')).toContain('AGENTS.md');
    for (const marked of ['PROJECT.md', 'OBJECTIVES.md', 'PLAN.md', 'PROGRESS.md']) {
      expect(await readFile(path.join(dir, marked), 'utf8')).toMatch(/^<!-- space:template/);
    }

    const project = JSON.parse(await readFile(path.join(dir, '.space/project.json'), 'utf8'));
    expect(Object.keys(project)).toEqual(['$schema', 'schema', '_template', 'name', 'display_name', 'description', 'created_at']);
    expect(project).toMatchObject({
      $schema: './project.schema.json',
      schema: 1,
      _template: true,
      name: 'my-big-project',
      display_name: 'My Big Project!',
      description: 'Plans for Q3',
    });
    expect(new Date(project.created_at).toISOString()).toBe(project.created_at);
    expect(Date.parse(project.created_at)).toBeGreaterThanOrEqual(before);
    expect(Date.parse(project.created_at)).toBeLessThanOrEqual(after);
    expect(existsSync(path.resolve(path.join(dir, '.space'), project.$schema))).toBe(true);
  });

  it('normalizes the name (lowercased, dashed, accents dropped) and seeds display_name and description', async () => {
    const res = await mkdirApi({ path: path.join(projects, 'Été  2025 / Q3'.replace('/', '_')), scaffold: true, display_name: '../../evil' });
    expect(res.json()).toMatchObject({ name: 'ete-2025-q3', path: path.join(projects, 'ete-2025-q3') });
    const project = JSON.parse(await readFile(path.join(projects, 'ete-2025-q3', '.space/project.json'), 'utf8'));
    expect(project).toMatchObject({ display_name: '../../evil', description: '' });
    expect(existsSync(path.join(home, 'evil'))).toBe(false);
  });

  it('a name with nothing left after normalization is 400 and creates nothing', async () => {
    const res = await mkdirApi({ path: path.join(projects, '!!! ???'), scaffold: true });
    expect(res.status).toBe(400);
    expect(res.json()).toEqual({ detail: 'Project name must contain a letter or a digit' });
    expect(await readdir(projects)).not.toContain('!!! ???');
  });

  it('never overwrites: an existing project folder (after normalization) is 409 and stays untouched', async () => {
    await mkdir(path.join(projects, 'kept'), { recursive: true });
    await writeFile(path.join(projects, 'kept', 'AGENTS.md'), 'mine');
    const res = await mkdirApi({ path: path.join(projects, 'KEPT'), scaffold: true });
    expect(res.status).toBe(409);
    expect(res.json()).toEqual({ detail: 'Already exists' });
    expect(await tree(path.join(projects, 'kept'))).toEqual(['AGENTS.md']);
    expect(await readFile(path.join(projects, 'kept', 'AGENTS.md'), 'utf8')).toBe('mine');
  });

  it('copies files entries last, skipping names taken by the scaffold; copied lists only them', async () => {
    const agents = await sourceFile('AGENTS.md', 'my own contract', 0o644, new Date());
    const brief = await sourceFile('brief.pdf', '%PDF-brief', 0o600, new Date('2020-02-02T00:00:00.000Z'));
    const res = await mkdirApi({ path: path.join(projects, 'with-brief'), scaffold: true, files: [agents, brief] });
    const dir = path.join(projects, 'with-brief');
    expect(res.json()).toEqual({ path: dir, name: 'with-brief', copied: ['brief.pdf'] });
    expect(await readFile(path.join(dir, 'AGENTS.md'), 'utf8')).toBe(await readFile(path.join(templateDir, 'AGENTS.md'), 'utf8'));
    expect((await stat(path.join(dir, 'brief.pdf'))).mtime.toISOString()).toBe('2020-02-02T00:00:00.000Z');
  });

  it('answers the real path when the projects root is reached through a symlink', async () => {
    const alt = await startService({ env: { SPACE_PROJECTS_ROOT: '~/linked-projects' } });
    try {
      await mkdir(path.join(alt.home, 'real-projects'));
      await symlink(path.join(alt.home, 'real-projects'), path.join(alt.home, 'linked-projects'));
      const res = await alt.post('/api/files/mkdir', { path: path.join(alt.home, 'linked-projects', 'Alpha'), scaffold: true });
      expect(res.status).toBe(200);
      expect(res.json()).toEqual({ path: path.join(alt.home, 'real-projects', 'alpha'), name: 'alpha', copied: [] });
    } finally {
      await alt.close();
    }
  });

  it('honours SPACE_PROJECTS_ROOT (with ~)', async () => {
    const alt = await startService({ env: { SPACE_PROJECTS_ROOT: '~/work/projects' } });
    try {
      const denied = await alt.post('/api/files/mkdir', { path: path.join(alt.home, 'space-projects', 'x'), scaffold: true });
      expect(denied.status).toBe(400);
      const res = await alt.post('/api/files/mkdir', { path: path.join(alt.home, 'work', 'projects', 'x'), scaffold: true });
      expect(res.json()).toMatchObject({ path: path.join(alt.home, 'work', 'projects', 'x'), name: 'x' });
    } finally {
      await alt.close();
    }
  });
});

describe('scaffold domain', () => {
  it('skips .git in the template and never overwrites', async () => {
    const base = await mkdtemp(path.join(os.tmpdir(), 'space-template-'));
    try {
      const template = path.join(base, 'template');
      await mkdir(path.join(template, '.git', 'objects'), { recursive: true });
      await writeFile(path.join(template, '.git', 'HEAD'), 'ref: refs/heads/main\n');
      await mkdir(path.join(template, 'docs'), { recursive: true });
      await writeFile(path.join(template, 'docs', 'guide.md'), 'guide');
      const userHome = path.join(base, 'home');
      await mkdir(userHome);
      const result = await makeDirectory(
        { home: userHome, projectsRoot: path.join(userHome, 'p'), templateDir: template },
        { path: path.join(userHome, 'p', 'demo'), scaffold: true, files: [] },
      );
      expect(await tree(result.path)).toEqual(['.space/project.json', '.space/sessions/sessionslist.json', 'docs/guide.md']);
      const project = JSON.parse(await readFile(path.join(result.path, '.space/project.json'), 'utf8'));
      expect(project).toMatchObject({ $schema: './project.schema.json', schema: 1, _template: true, name: 'demo', display_name: 'demo' });
    } finally {
      await rm(base, { recursive: true, force: true });
    }
  });

  it('a missing template fails the request and leaves no half-made project', async () => {
    const base = await mkdtemp(path.join(os.tmpdir(), 'space-template-'));
    try {
      const projectsRoot = path.join(base, 'p');
      const request = makeDirectory(
        { home: base, projectsRoot, templateDir: path.join(base, 'no-such-template') },
        { path: path.join(projectsRoot, 'demo'), scaffold: true, files: [] },
      );
      await expect(request).rejects.toThrow(/Project template missing/);
      expect(await readdir(projectsRoot)).toEqual([]);
    } finally {
      await rm(base, { recursive: true, force: true });
    }
  });
});
