import { mkdir, readdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { errorCode } from './containment.js';
import { copyFiles, type SourceFile } from './copy.js';
import { mkdirExclusive, undoOnFailure, type CreatedDirectory } from './new-dir.js';
import { writeProjectFile } from './project-file.js';

export interface ScaffoldPlan {
  home: string;
  /** The real projects root; the project folder goes right under it. */
  projectsRoot: string;
  templateDir: string;
  /** Normalized project id, also the folder name. */
  name: string;
  displayName: string;
  description: string;
  sources: readonly SourceFile[];
}

/** mkdir with `scaffold: true`, the spec's steps 1-7, on an already validated plan. */
export async function scaffoldProject(plan: ScaffoldPlan): Promise<CreatedDirectory> {
  const dir = path.join(plan.projectsRoot, plan.name);
  await mkdir(plan.projectsRoot, { recursive: true });
  await mkdirExclusive(dir);
  const copied = await undoOnFailure(dir, async () => {
    await copyTemplate(plan.templateDir, dir);
    const sessions = path.join(dir, '.space', 'sessions');
    await mkdir(sessions, { recursive: true });
    await createIfMissing(path.join(sessions, 'sessionslist.json'), '{}\n');
    await writeProjectFile(dir, { name: plan.name, displayName: plan.displayName, description: plan.description });
    // Last, so an entry named like a scaffolded file is skipped rather than overwriting it.
    return copyFiles(plan.home, dir, plan.sources);
  });
  return { path: dir, name: plan.name, copied };
}

/**
 * Copies the template tree, skipping `.git` and never overwriting. Plain read and write
 * rather than copyFile, because in the packaged app the template sits inside app.asar.
 */
async function copyTemplate(from: string, to: string): Promise<void> {
  let entries;
  try {
    entries = await readdir(from, { withFileTypes: true });
  } catch (err) {
    if (errorCode(err) === 'ENOENT') throw new Error(`Project template missing: ${from}`);
    throw err;
  }
  for (const entry of entries) {
    if (entry.name === '.git') continue;
    const source = path.join(from, entry.name);
    const target = path.join(to, entry.name);
    if (entry.isDirectory()) {
      await mkdir(target, { recursive: true });
      await copyTemplate(source, target);
    } else if (entry.isFile()) {
      await createIfMissing(target, await readFile(source));
    }
  }
}

async function createIfMissing(file: string, data: string | Buffer): Promise<void> {
  try {
    await writeFile(file, data, { flag: 'wx' });
  } catch (err) {
    if (errorCode(err) !== 'EEXIST') throw err;
  }
}
