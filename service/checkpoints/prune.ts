import { readdir, readFile, stat } from 'node:fs/promises';
import path from 'node:path';
import type { Logger } from '../log.js';
import type { GitStore } from './git.js';
import type { SessionTurns, TurnLedger } from './ledger.js';
import type { CheckpointStore } from './store.js';

/**
 * Keeps the checkpoint stores under a disk bound (SPACE_CHECKPOINT_MAX_BYTES). Over it,
 * whole sessions lose their checkpoints, oldest session first (by its newest entry), until
 * the stores fit: their entries stay listed but are no longer revertible. The sessions
 * inside the bound, and always the newest one, keep every checkpoint. Objects go only through `git gc --prune=now`,
 * after every tree a remaining ledger names has been given a ref.
 */
export async function pruneStores(checkpoints: CheckpointStore, ledger: TurnLedger, bound: number, log: Logger): Promise<string[]> {
  if ((await bytesOf(checkpoints.root)) <= bound) return [];
  const sessions = (await ledger.all()).sort((a, b) => newest(a) - newest(b));
  const pruned: string[] = [];
  // The newest session always keeps its checkpoints, whatever the bound.
  while (sessions.length > 1 && (await bytesOf(checkpoints.root)) > bound) {
    const oldest = sessions.shift()!;
    await ledger.dropCheckpoints(oldest.session_id, 'pruned: the checkpoint stores were over their disk bound');
    pruned.push(oldest.session_id);
    await collect(checkpoints, sessions, log);
  }
  return pruned;
}

function newest(s: SessionTurns): number {
  return Math.max(0, ...s.turns.map((t) => Date.parse(t.ended_at ?? t.started_at) || 0));
}

/** Every store: refs for the trees the kept ledgers name, then a collection of the rest. */
async function collect(checkpoints: CheckpointStore, kept: readonly SessionTurns[], log: Logger): Promise<void> {
  const live = new Map<string, Set<string>>();
  for (const session of kept) {
    for (const turn of session.turns) {
      if (!turn.directory) continue;
      const store = await checkpoints.storeOf(turn.directory).catch(() => undefined);
      if (!store) continue;
      const trees = live.get(store.gitDir) ?? new Set<string>();
      for (const side of [turn.pre, turn.post]) if (side) trees.add(side.tree);
      live.set(store.gitDir, trees);
    }
  }
  for (const dir of await readdir(checkpoints.root).catch(() => [] as string[])) {
    const meta = await readFile(path.join(checkpoints.root, dir, 'meta.json'), 'utf8').catch(() => undefined);
    if (!meta) continue;
    const store: GitStore = { gitDir: path.join(checkpoints.root, dir, 'store.git'), indexFile: path.join(checkpoints.root, dir, 'index'), workTree: (JSON.parse(meta) as { directory: string }).directory };
    const trees = live.get(store.gitDir) ?? new Set<string>();
    await checkpoints
      .exclusive(store, async () => {
        const deadline = Date.now() + 120_000;
        const old = (await checkpoints.git({ ...store, workTree: '' }, { args: ['for-each-ref', '--format=%(refname)', 'refs/space/'], deadline, bare: true })).stdout.toString().split('\n').filter(Boolean);
        const commands = [...old.map((ref) => `delete ${ref}\n`), ...[...trees].map((tree) => `create refs/space/keep/${tree} ${tree}\n`)].join('');
        if (commands) await checkpoints.git(store, { args: ['update-ref', '--stdin'], input: commands, deadline, bare: true });
        await checkpoints.git(store, { args: ['gc', '--prune=now', '--quiet'], deadline, bare: true });
      })
      .catch((err: unknown) => log.warn({ err: String(err), store: store.gitDir }, 'checkpoint store collection failed'));
  }
}

async function bytesOf(dir: string): Promise<number> {
  let total = 0;
  for (const entry of await readdir(dir, { withFileTypes: true, recursive: true }).catch(() => [])) {
    if (entry.isFile()) total += (await stat(path.join(entry.parentPath, entry.name)).catch(() => ({ size: 0 }))).size;
  }
  return total;
}
