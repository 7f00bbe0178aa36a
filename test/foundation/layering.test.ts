import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

/** The architecture's rules, checked on the source itself. */
const root = path.resolve(import.meta.dirname, '../..');

function sources(dir: string): string[] {
  return readdirSync(path.join(root, dir), { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile() && /\.(c|m)?ts$/.test(e.name))
    .map((e) => path.relative(root, path.join(e.parentPath, e.name)));
}

function imports(file: string): string[] {
  const text = readFileSync(path.join(root, file), 'utf8');
  return [...text.matchAll(/(?:^|\n)\s*(?:import|export)\b[^'"]*?from\s*['"]([^'"]+)['"]|import\(\s*['"]([^'"]+)['"]\s*\)/g)].map((m) => (m[1] ?? m[2])!);
}

describe('layering', () => {
  it('service/ never imports electron, main/ or preload/', () => {
    const offenders = sources('service').flatMap((file) =>
      imports(file)
        .filter((spec) => spec === 'electron' || spec.startsWith('electron/') || /(^|\/)(main|preload)\//.test(path.join(path.dirname(file), spec)))
        .map((spec) => `${file} -> ${spec}`),
    );
    expect(offenders).toEqual([]);
  });

  it('main/ uses Electron values only in its entry point; the rest takes them injected', () => {
    const offenders = sources('main')
      .filter((f) => !f.endsWith('main/index.ts'))
      .filter((f) => /^import\s+(?!type\b)[^;]*from\s+['"]electron['"]/m.test(readFileSync(path.join(root, f), 'utf8')));
    expect(offenders).toEqual([]);
  });

  /** `file`'s relative imports, as paths from the project root. */
  function localImports(file: string): string[] {
    return imports(file)
      .filter((s) => s.startsWith('.'))
      .map((s) => path.join(path.dirname(file), s).replace(/\.js$/, '.ts'));
  }

  it('only service/index.ts imports the assembly in service/app/', () => {
    const offenders = sources('service')
      .filter((f) => f !== path.join('service', 'index.ts') && !f.startsWith(path.join('service', 'app') + path.sep))
      .flatMap((f) => localImports(f).filter((dep) => dep.startsWith(path.join('service', 'app') + path.sep)).map((dep) => `${f} -> ${dep}`));
    expect(offenders).toEqual([]);
  });

  it('service/http/ holds request primitives: it imports only config, errors and log', () => {
    const ground = new Set(['config.ts', 'errors.ts', 'log.ts'].map((f) => path.join('service', f)));
    const offenders = sources(path.join('service', 'http')).flatMap((f) =>
      localImports(f)
        .filter((dep) => !dep.startsWith(path.join('service', 'http') + path.sep) && !ground.has(dep))
        .map((dep) => `${f} -> ${dep}`),
    );
    expect(offenders).toEqual([]);
  });

  it('service/runtimes/ never imports service/sessions/', () => {
    const offenders = sources(path.join('service', 'runtimes')).flatMap((f) =>
      localImports(f).filter((dep) => dep.startsWith(path.join('service', 'sessions') + path.sep)).map((dep) => `${f} -> ${dep}`),
    );
    expect(offenders).toEqual([]);
  });

  it('service/ has no import cycles', () => {
    const graph = new Map<string, string[]>();
    for (const file of sources('service')) {
      const deps = imports(file)
        .filter((s) => s.startsWith('.'))
        .map((s) => path.join(path.dirname(file), s).replace(/\.js$/, '.ts'));
      graph.set(file, deps);
    }
    const cycles: string[] = [];
    const state = new Map<string, 'visiting' | 'done'>();
    const visit = (node: string, trail: string[]): void => {
      if (state.get(node) === 'done') return;
      if (state.get(node) === 'visiting') {
        cycles.push([...trail.slice(trail.indexOf(node)), node].join(' -> '));
        return;
      }
      state.set(node, 'visiting');
      for (const dep of graph.get(node) ?? []) visit(dep, [...trail, node]);
      state.set(node, 'done');
    };
    for (const node of graph.keys()) visit(node, []);
    expect(cycles).toEqual([]);
  });
});
