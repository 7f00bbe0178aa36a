#!/usr/bin/env node
/**
 * Bundles the two entry points that start the service, after `tsc` has built dist/: the
 * headless `dist/service/cli.js` and the Electron main `dist/main/index.js` are each
 * replaced by one ESM file holding every module they import (express, pino, zod, ... and
 * the service). Loading one file instead of about 900 modules takes the module-loading part
 * of a start from about 300 ms to about 130 ms (docs/startup.md).
 *
 * Everything else in dist/ stays what `tsc` made: worker threads still start their own
 * entry files beside the module that starts them. For that, `import.meta.url` in each
 * bundled source is replaced by the URL its `tsc` output has (relative to the bundle, so it
 * holds inside app.asar too). Native addons and Electron's own packages stay external.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { build } from 'esbuild';

const root = path.resolve(import.meta.dirname, '..');
const EXTERNAL = ['electron', 'electron-store', 'electron-updater', 'better-sqlite3', 'node-pty'];
export const BUNDLES = [
  { entry: 'service/cli.ts', out: 'dist/service/cli.js' },
  { entry: 'main/index.ts', out: 'dist/main/index.js' },
];

/** `import.meta.url` of a source file as the bundle at `out` would see its tsc output. */
function metaUrlPlugin(out) {
  return {
    name: 'tsc-output-meta-url',
    setup(b) {
      b.onLoad({ filter: /\.ts$/ }, (args) => {
        const text = readFileSync(args.path, 'utf8');
        const rel = path.relative(root, args.path);
        if (!text.includes('import.meta') || rel.startsWith('..') || rel.includes('node_modules')) return undefined;
        const compiled = path.join(root, 'dist', rel.replace(/\.ts$/, '.js'));
        const fromBundle = path.relative(path.dirname(path.join(root, out)), compiled).split(path.sep).join('/');
        const url = `new URL(${JSON.stringify(fromBundle.startsWith('.') ? fromBundle : `./${fromBundle}`)}, import.meta.url).href`;
        if (text.includes('import.meta.dirname') || text.includes('import.meta.filename')) throw new Error(`${rel}: use import.meta.url (the bundle rewrites only that)`);
        return { contents: text.replaceAll('import.meta.url', `(${url})`), loader: 'ts' };
      });
    },
  };
}

export async function bundle() {
  for (const { entry, out } of BUNDLES) {
    await build({
      absWorkingDir: root,
      entryPoints: [entry],
      outfile: out,
      bundle: true,
      platform: 'node',
      format: 'esm',
      target: 'node20',
      external: EXTERNAL,
      sourcemap: true,
      minifyWhitespace: true,
      minifySyntax: true,
      logLevel: 'error',
      // CommonJS packages inside an ESM bundle call require() for Node's built-ins.
      banner: { js: "import { createRequire as __spaceRequire } from 'node:module'; const require = __spaceRequire(import.meta.url);" },
      plugins: [metaUrlPlugin(out)],
    });
  }
}

// Run as a script (a path with spaces is percent-encoded in the module's URL).
if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) await bundle();
