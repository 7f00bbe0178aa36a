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

  /** The folder of service/ a file is in, or the file itself when it is at the top: `auth`, `config.ts`. */
  function unitOf(file: string): string {
    return path.relative('service', file).split(path.sep)[0]!;
  }

  /**
   * The layer table, lowest floor first: every unit of service/ is on one floor and imports
   * only units on lower floors. Features take `Core & { ... }` (service/core.ts), declared in
   * their own folder; the composition root (app/context.ts) builds every long-lived service
   * and hands each feature what it names. auth/ and secrets/ sit low because other features
   * use their helpers (AuthState, the active env file); runtimes/ is below sessions/, fts/,
   * usage/ and chat/, which read what the runtimes write or drive their turns. transcripts/
   * (each program's record format) is the floor runtimes/ and sessions/ stand on.
   */
  const FLOORS: readonly (readonly string[])[] = [
    ['app-root.ts', 'config-values.ts', 'errors.ts', 'host.ts', 'ids.ts', 'log.ts', 'version.ts'],
    ['config.ts', 'stores'],
    ['http', 'process'],
    ['transcripts'],
    ['core.ts'],
    ['auth', 'secrets'],
    ['agents', 'bootstrap', 'channels', 'diagnostics', 'files', 'lifecycle', 'onboarding', 'status'],
    ['runtimes'],
    ['config-api', 'connectors', 'sessions', 'temp-sweep.ts'],
    ['fts', 'usage', 'limits'],
    ['events', 'budgets'],
    ['checkpoints'],
    ['chat'],
  ];
  /** The assembly: above every floor, it may import anything (only index.ts imports app/, checked above). */
  const ASSEMBLY = ['app', 'cached-start.ts', 'cli.ts', 'headless.ts', 'index.ts', 'run.ts'];

  it('every unit of service/ is on a floor of the layer table or in the assembly', () => {
    const units = new Set(sources('service').map(unitOf));
    const listed = [...FLOORS.flat(), ...ASSEMBLY];
    expect({ unlisted: [...units].filter((u) => !listed.includes(u)), missing: listed.filter((u) => !units.has(u)) }).toEqual({ unlisted: [], missing: [] });
  });

  it('each unit on the layer table imports only units on lower floors', () => {
    const floor = new Map(FLOORS.flatMap((units, i) => units.map((u) => [u, i] as const)));
    const offenders = sources('service')
      .filter((f) => floor.has(unitOf(f)))
      .flatMap((f) =>
        localImports(f)
          .filter((dep) => unitOf(dep) !== unitOf(f) && !((floor.get(unitOf(dep)) ?? Infinity) < floor.get(unitOf(f))!))
          .map((dep) => `${f} -> ${dep}`),
      );
    expect(offenders).toEqual([]);
  });

  it('service/core.ts imports only config, log, host and the supervisor', () => {
    const allowed = ['config.ts', 'log.ts', 'host.ts', 'process/supervisor.ts'].map((f) => path.join('service', f));
    expect(localImports(path.join('service', 'core.ts')).filter((dep) => !allowed.includes(dep))).toEqual([]);
  });

  /** Every cycle found by a depth-first walk of `graph`, as `a -> b -> a`. */
  function cyclesOf(graph: ReadonlyMap<string, Iterable<string>>): string[] {
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
    return cycles;
  }

  it('service/ has no import cycles', () => {
    expect(cyclesOf(new Map(sources('service').map((file) => [file, localImports(file)])))).toEqual([]);
  });

  it('service/ has no import cycles between its folders and top-level files', () => {
    const graph = new Map<string, Set<string>>();
    for (const file of sources('service')) {
      const deps = graph.get(unitOf(file)) ?? new Set<string>();
      for (const dep of localImports(file)) if (dep.startsWith('service' + path.sep) && unitOf(dep) !== unitOf(file)) deps.add(unitOf(dep));
      graph.set(unitOf(file), deps);
    }
    expect(cyclesOf(graph)).toEqual([]);
  });
});
