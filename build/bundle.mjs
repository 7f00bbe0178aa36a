#!/usr/bin/env node
/**
 * Bundles the entry points that start the service, after `tsc` has built dist/: the headless
 * service becomes one CommonJS file `dist/service/headless.cjs`, started by
 * `dist/service/cli.js` through a V8 code cache (service/cached-start.ts), and the Electron main
 * `dist/main/index.js` one ESM file; each holds every module it imports (express, pino, zod,
 * ... and the service). Loading one file instead of about 900 modules takes the module-loading
 * part of a start from about 300 ms to about 130 ms, the code cache about 55 ms more (docs/startup.md).
 *
 * Everything else in dist/ stays what `tsc` made: worker threads still start their own
 * entry files beside the module that starts them. For that, `import.meta.url` in each
 * bundled source is replaced by the URL its `tsc` output has (relative to the bundle, so it
 * holds inside app.asar too). Native addons and Electron's own packages stay external.
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { build } from 'esbuild';

const root = path.resolve(import.meta.dirname, '..');
const EXTERNAL = ['electron', 'electron-store', 'electron-updater', 'better-sqlite3', 'node-pty'];
/**
 * The headless service is CommonJS (`headless.cjs`), started by `cli.js` (service/cached-start.ts)
 * through a V8 code cache, which Node 20 has for scripts but not for ES modules. The Electron
 * main stays one ES module (Electron's Node has a compile cache of its own).
 */
export const BUNDLES = [
  { entry: 'service/headless.ts', out: 'dist/service/headless.cjs', format: 'cjs' },
  { entry: 'service/cached-start.ts', out: 'dist/service/cli.js', format: 'esm' },
  { entry: 'main/index.ts', out: 'dist/main/index.js', format: 'esm' },
];
/** `import.meta.url` of the bundle itself: ES modules have it; in CommonJS it is made from __filename. */
const BANNERS = {
  // CommonJS packages inside an ESM bundle call require() for Node's built-ins.
  esm: { meta: 'import.meta.url', js: "import { createRequire as __spaceRequire } from 'node:module'; const require = __spaceRequire(import.meta.url);" },
  cjs: { meta: '__spaceMetaUrl', js: "const __spaceMetaUrl = require('node:url').pathToFileURL(__filename).href;" },
};

/**
 * express's index requires body-parser (and through it raw-body and iconv-lite's tables) only to
 * re-export its factories; the service reads request bodies itself (service/http/json-body.ts).
 * In the bundles, express gets factories that load body-parser on their first call: its
 * evaluation left the start (about 19 ms of the bundle's 60-80 ms, CPU profile).
 */
function lazyBodyParser() {
  const real = createRequire(path.join(root, 'package.json')).resolve('body-parser');
  const factories = ['json', 'raw', 'text', 'urlencoded'];
  const contents = `const real = () => require(${JSON.stringify(real)});\nmodule.exports = { ${factories.map((f) => `${f}: (options) => real().${f}(options)`).join(', ')} };\n`;
  return {
    name: 'lazy-body-parser',
    setup(b) {
      b.onResolve({ filter: /^body-parser$/ }, (args) => (args.importer.includes(`${path.sep}express${path.sep}`) ? { path: 'body-parser', namespace: 'lazy-body-parser' } : undefined));
      b.onLoad({ filter: /.*/, namespace: 'lazy-body-parser' }, () => ({ contents, loader: 'js', resolveDir: root }));
    },
  };
}

/** `import.meta.url` of a source file as the bundle at `out` would see its tsc output. */
function metaUrlPlugin(out, bundleUrl) {
  return {
    name: 'tsc-output-meta-url',
    setup(b) {
      b.onLoad({ filter: /\.ts$/ }, (args) => {
        const text = readFileSync(args.path, 'utf8');
        const rel = path.relative(root, args.path);
        if (!text.includes('import.meta') || rel.startsWith('..') || rel.includes('node_modules')) return undefined;
        const compiled = path.join(root, 'dist', rel.replace(/\.ts$/, '.js'));
        const fromBundle = path.relative(path.dirname(path.join(root, out)), compiled).split(path.sep).join('/');
        const url = `new URL(${JSON.stringify(fromBundle.startsWith('.') ? fromBundle : `./${fromBundle}`)}, ${bundleUrl}).href`;
        if (text.includes('import.meta.dirname') || text.includes('import.meta.filename')) throw new Error(`${rel}: use import.meta.url (the bundle rewrites only that)`);
        return { contents: text.replaceAll('import.meta.url', `(${url})`), loader: 'ts' };
      });
    },
  };
}

export async function bundle() {
  for (const { entry, out, format } of BUNDLES) {
    await build({
      absWorkingDir: root,
      entryPoints: [entry],
      outfile: out,
      bundle: true,
      platform: 'node',
      format,
      target: 'node20',
      external: EXTERNAL,
      sourcemap: true,
      minifyWhitespace: true,
      minifySyntax: true,
      logLevel: 'error',
      banner: { js: BANNERS[format].js },
      plugins: [metaUrlPlugin(out, BANNERS[format].meta), lazyBodyParser()],
    });
  }
}

// Run as a script (a path with spaces is percent-encoded in the module's URL).
if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) await bundle();
