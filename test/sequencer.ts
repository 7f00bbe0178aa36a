import path from 'node:path';
import { BaseSequencer, type TestSpecification } from 'vitest/node';
import { laneFiles } from './tools/lanes.mjs';

/**
 * The order files start in, with files side by side: the real-program lanes first (each takes
 * a minute or more: a cold OpenClaw gateway alone is 10-20 s of CPU), so that the short files
 * fill the workers around them instead of the run ending on one long lane. Among the lanes and
 * among the rest, vitest's own order (the slowest of the last run first, where it remembers one;
 * on a fresh clone, the largest file first).
 */
export default class LanesFirst extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const sorted = await super.sort(files);
    const root = this.ctx.config.root;
    const lanes = new Set(laneFiles(root).map((f) => path.join(root, f)));
    return [...sorted.filter((f) => lanes.has(f.moduleId)), ...sorted.filter((f) => !lanes.has(f.moduleId))];
  }
}
