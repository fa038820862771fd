// The `streamscope` command (profiler/cli/launch.cjs, package.json "bin",
// `npm run streamscope`): the bundled CLI where it was built from the
// sources as they are now, the TypeScript sources where it is missing or
// stale, whatever the change; and a bundle whose errors still name the
// TypeScript sources. On a tree of its own (a copy of the launcher beside a
// stand-in bundle and stand-in sources) and on a build of its own
// (node_modules/.cache), never on app/dist.
import { execFileSync, spawnSync } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { repoRoot } from '../../profiler/native/paths.ts';
import { tempDir } from '../helpers/native.ts';

const launcher = path.join(repoRoot, 'profiler/cli/launch.cjs');
const script = path.join(repoRoot, 'profiler/cli/streamscope.sh');
const { bundleState, writeStamp, restoreUserTunables, ONE_HEAP_TUNABLE } = createRequire(import.meta.url)(
  launcher,
) as typeof import('../../profiler/cli/launch.cjs');
const sha256 = (file: string) => crypto.createHash('sha256').update(fs.readFileSync(file)).digest('hex');

describe('the launcher picks the bundle when current, the sources otherwise', () => {
  // ROOT/profiler/cli/launch.cjs (a copy: it finds the checkout two folders
  // up), ROOT/profiler/cli/streamscope.ts and ROOT/app/dist/streamscope-cli.cjs
  // stand-ins that say which ran, and the sources the stamp lists.
  let root: string;
  let dist: string;
  const lib = () => path.join(root, 'profiler/lib/thing.ts');
  const other = () => path.join(root, 'profiler/lib/other.ts');
  const stamp = () => writeStamp(root, dist, { 'profiler/lib/thing.ts': sha256(lib()), 'profiler/lib/other.ts': sha256(other()) });
  function run(env: Record<string, string> = {}) {
    const r = spawnSync(process.execPath, [path.join(root, 'profiler/cli/launch.cjs'), 'report', 'x.sqlite'], {
      encoding: 'utf8',
      env: { ...process.env, STREAMSCOPE_CLI: '', ...env },
    });
    return { code: r.status, out: r.stdout.trim(), err: r.stderr };
  }

  beforeEach(() => {
    root = tempDir('launch');
    dist = path.join(root, 'app/dist');
    fs.mkdirSync(path.join(root, 'profiler/cli'), { recursive: true });
    fs.mkdirSync(path.join(root, 'profiler/lib'), { recursive: true });
    fs.mkdirSync(dist, { recursive: true });
    fs.copyFileSync(launcher, path.join(root, 'profiler/cli/launch.cjs'));
    fs.writeFileSync(path.join(root, 'package.json'), '{ "type": "module" }\n');
    fs.writeFileSync(
      path.join(root, 'profiler/cli/streamscope.ts'),
      "const args: string[] = process.argv.slice(2);\nconsole.log('sources', args.join(' '));\n",
    );
    fs.writeFileSync(path.join(dist, 'streamscope-cli.cjs'), "console.log('bundle', process.argv.slice(2).join(' '), process.sourceMapsEnabled);\n");
    fs.writeFileSync(lib(), 'export const x = 1;\n');
    fs.writeFileSync(other(), 'export const y = 2;\n');
    stamp();
  });

  it('current: the bundle, with the arguments and source maps on', () => {
    expect(bundleState(root)).toEqual({ current: true, entry: path.join(dist, 'streamscope-cli.cjs') });
    expect(run()).toEqual({ code: 0, out: 'bundle report x.sqlite true', err: '' });
  });

  it('no bundle, no stamp, an unreadable or foreign stamp: the sources', () => {
    fs.rmSync(path.join(dist, 'streamscope-cli.cjs'));
    expect(run().out).toBe('sources report x.sqlite');
    fs.rmSync(dist, { recursive: true });
    expect(bundleState(root)).toMatchObject({ current: false, reason: expect.stringMatching(/^no bundle/) });
    expect(run().out).toBe('sources report x.sqlite');
    fs.mkdirSync(dist);
    fs.writeFileSync(path.join(dist, 'streamscope-cli.cjs'), "console.log('bundle');\n");
    fs.writeFileSync(path.join(dist, 'streamscope-cli.stamp.json'), '{ "version": 1, "files": [');
    expect(bundleState(root)).toMatchObject({ current: false, reason: expect.stringMatching(/^its stamp is unreadable/) });
    expect(run().out).toBe('sources report x.sqlite');
    fs.writeFileSync(path.join(dist, 'streamscope-cli.stamp.json'), '{ "version": 99, "entry": "streamscope-cli.cjs", "files": [] }');
    expect(run().out).toBe('sources report x.sqlite');
  });

  it('a source edited (another size), or removed: the sources', () => {
    fs.appendFileSync(lib(), 'export const z = 3;\n');
    expect(bundleState(root)).toEqual({ current: false, reason: 'profiler/lib/thing.ts changed since the bundle was built' });
    expect(run().out).toBe('sources report x.sqlite');
    stamp();
    expect(run().out).toBe('bundle report x.sqlite true');
    fs.rmSync(other());
    expect(bundleState(root)).toEqual({ current: false, reason: 'profiler/lib/other.ts is gone' });
    expect(run().out).toBe('sources report x.sqlite');
  });

  it('a source edited to the same size with its modification time set back: the sources (its content is hashed)', () => {
    // Times of whole seconds, so that setting one back is exact (cp -p, tar and touch -r do as much).
    fs.utimesSync(lib(), 1_700_000_000, 1_700_000_000);
    stamp();
    const before = fs.statSync(lib());
    fs.writeFileSync(lib(), 'export const x = 7;\n');
    fs.utimesSync(lib(), 1_700_000_000, 1_700_000_000);
    const after = fs.statSync(lib());
    expect([after.size, after.mtimeMs]).toEqual([before.size, before.mtimeMs]);
    expect(bundleState(root)).toEqual({ current: false, reason: 'profiler/lib/thing.ts changed since the bundle was built' });
    expect(run().out).toBe('sources report x.sqlite');
  });

  it('a source touched or rewritten as it was: still the bundle', () => {
    fs.utimesSync(lib(), new Date(), new Date(Date.now() + 5000));
    fs.writeFileSync(other(), fs.readFileSync(other()));
    expect(bundleState(root).current).toBe(true);
    expect(run().out).toBe('bundle report x.sqlite true');
  });

  it('a source that changed while the bundle was being built: the sources, however its times look', () => {
    // The stamp holds the hash of what the bundler read; the file holds something else by the time the stamp is written.
    expect(writeStamp(root, dist, { 'profiler/lib/thing.ts': sha256(other()), 'profiler/lib/other.ts': sha256(other()) })).toEqual(['profiler/lib/thing.ts']);
    expect(bundleState(root)).toEqual({ current: false, reason: 'profiler/lib/thing.ts changed since the bundle was built' });
    expect(run().out).toBe('sources report x.sqlite');
  });

  it('STREAMSCOPE_CLI=sources runs the sources; =bundle refuses a stale bundle, saying why', () => {
    expect(run({ STREAMSCOPE_CLI: 'sources' }).out).toBe('sources report x.sqlite');
    expect(run({ STREAMSCOPE_CLI: 'bundle' }).out).toBe('bundle report x.sqlite true');
    fs.appendFileSync(lib(), '// edited\n');
    const r = run({ STREAMSCOPE_CLI: 'bundle' });
    expect(r.code).toBe(2);
    expect(r.out).toBe('');
    expect(r.err).toBe(
      'streamscope: STREAMSCOPE_CLI=bundle, but the bundled CLI is not current: profiler/lib/thing.ts changed since the bundle was built (npm run build:app builds it)\n',
    );
  });
});

describe("a one-shot command runs with one malloc arena, its children with the user's environment", () => {
  // The command as a user runs it (streamscope.sh, then the launcher), beside a stand-in bundle that prints the
  // environment Node started with (/proc/self/environ: what glibc read) and the one it hands the programs it starts.
  let root: string;
  beforeEach(() => {
    root = tempDir('launch-heap');
    fs.mkdirSync(path.join(root, 'profiler/cli'), { recursive: true });
    fs.mkdirSync(path.join(root, 'app/dist'), { recursive: true });
    fs.copyFileSync(launcher, path.join(root, 'profiler/cli/launch.cjs'));
    fs.copyFileSync(script, path.join(root, 'profiler/cli/streamscope.sh'));
    fs.chmodSync(path.join(root, 'profiler/cli/streamscope.sh'), 0o755);
    // Run through a link, as npm's bin link runs it: the launcher is found beside the script, not the link.
    fs.mkdirSync(path.join(root, 'bin'));
    fs.symlinkSync(path.join(root, 'profiler/cli/streamscope.sh'), path.join(root, 'bin/streamscope'));
    fs.writeFileSync(
      path.join(root, 'app/dist/streamscope-cli.cjs'),
      `const started = require('node:fs').readFileSync('/proc/self/environ', 'utf8').split('\\0').find((v) => v.startsWith('GLIBC_TUNABLES=')) ?? null;
console.log(JSON.stringify({ started, now: process.env.GLIBC_TUNABLES ?? null, left: Object.keys(process.env).filter((k) => k.startsWith('STREAMSCOPE_USER')) }));\n`,
    );
    fs.mkdirSync(path.join(root, 'profiler/lib'));
    fs.writeFileSync(path.join(root, 'profiler/lib/thing.ts'), 'export const x = 1;\n');
    writeStamp(root, path.join(root, 'app/dist'), { 'profiler/lib/thing.ts': sha256(path.join(root, 'profiler/lib/thing.ts')) });
  });
  // `node` found on the PATH, as the shell line finds it: this process's Node first.
  const run = (args: string[], tunables?: string) => {
    const env: Record<string, string | undefined> = { ...process.env, PATH: `${path.dirname(process.execPath)}:${process.env.PATH}`, STREAMSCOPE_CLI: '' };
    if (tunables === undefined) delete env.GLIBC_TUNABLES;
    else env.GLIBC_TUNABLES = tunables;
    const r = spawnSync(path.join(root, 'bin/streamscope'), args, { encoding: 'utf8', env });
    expect(r.stderr).toBe('');
    return JSON.parse(r.stdout) as { started: string | null; now: string | null; left: string[] };
  };

  it('report, check, diff, summarize and export start with the tunable; the user has none after it', () => {
    for (const command of ['report', 'check', 'diff', 'summarize', 'export'])
      expect(run([command, 'x.sqlite'])).toEqual({ started: `GLIBC_TUNABLES=${ONE_HEAP_TUNABLE}`, now: null, left: [] });
  });

  it("with the user's own tunables: started with the one-heap one too, theirs again inside", () => {
    // (The loader rewrites the variable it read, so /proc shows the first tunable alone.)
    expect(run(['report', 'x.sqlite'], 'glibc.malloc.tcache_count=7')).toEqual({
      started: expect.stringMatching(new RegExp(`^GLIBC_TUNABLES=${ONE_HEAP_TUNABLE.replaceAll('.', '\\.')}`)),
      now: 'glibc.malloc.tcache_count=7',
      left: [],
    });
  });

  it('the other commands (the server, record, import) start as the user set them', () => {
    expect(run(['serve', 'x.sqlite'])).toEqual({ started: null, now: null, left: [] });
    expect(run(['record', '--', 'true'], 'glibc.malloc.tcache_count=7')).toEqual({
      started: 'GLIBC_TUNABLES=glibc.malloc.tcache_count=7',
      now: 'glibc.malloc.tcache_count=7',
      left: [],
    });
  });

  it("the script's commands are those streamscope.ts gives the one-shot heap, its tunable the launcher's", () => {
    const shell = fs.readFileSync(script, 'utf8');
    const listed = /^ {2}([\w| -]+)\)$/m
      .exec(shell)![1]!
      .split('|')
      .map((c) => c.trim())
      .sort();
    expect(shell).toContain(`GLIBC_TUNABLES="${ONE_HEAP_TUNABLE}\${GLIBC_TUNABLES:+:$GLIBC_TUNABLES}"`);
    const cli = fs.readFileSync(path.join(repoRoot, 'profiler/cli/streamscope.ts'), 'utf8');
    const oneShot = [...cli.matchAll(/^ {2}'?([\w-]+)'?: async \(args\) => \(await oneShot\(/gm)].map((m) => m[1]!).sort();
    expect(oneShot.length).toBeGreaterThan(3);
    expect(listed).toEqual(oneShot);
  });

  it('restoreUserTunables leaves an environment the script did not change as it is', () => {
    const env: Record<string, string | undefined> = { GLIBC_TUNABLES: 'glibc.malloc.tcache_count=7' };
    restoreUserTunables(env);
    expect(env).toEqual({ GLIBC_TUNABLES: 'glibc.malloc.tcache_count=7' });
  });
});

describe("the app's build of the CLI", () => {
  // The build of `npm run build:app` (its first half, which holds the CLI),
  // into a folder of its own under node_modules so that the bundle's
  // external better-sqlite3 still resolves.
  const outDir = path.join(repoRoot, 'node_modules/.cache/streamscope-test/cli-build');
  beforeAll(() => {
    execFileSync(
      process.execPath,
      [path.join(repoRoot, 'node_modules/vite/bin/vite.js'), 'build', '-c', 'app/vite.config.ts', '--outDir', outDir, '--emptyOutDir'],
      {
        cwd: repoRoot,
        stdio: 'pipe',
      },
    );
  }, 120_000);

  it("stamps what the CLI and its workers were built from, and not the app's main", () => {
    const stamp = JSON.parse(fs.readFileSync(path.join(outDir, 'streamscope-cli.stamp.json'), 'utf8')) as { files: { path: string }[] };
    const files = stamp.files.map((f) => f.path);
    for (const f of [
      'profiler/cli/streamscope.ts',
      'profiler/cli/analysis-commands.ts',
      'profiler/native/addon.ts',
      'profiler/query/query-worker.ts',
      'profiler/query/analysis-worker.ts',
      'profiler/analysis/diagnosis/job-worker.ts',
      'profiler/analysis/diagnosis/whatif-worker.ts',
      'profiler/job/summary-worker.ts',
      'profiler/import/import-worker.ts',
      'package.json',
      'app/vite.config.ts',
    ]) {
      expect(files).toContain(f);
    }
    expect(files.some((f) => f.startsWith('node_modules/valibot/'))).toBe(true);
    expect(files).not.toContain('app/main.ts');
    // The workers the CLI starts from the folder it is bundled into (base/worker-pool.ts workerEntry), each an entry.
    for (const worker of ['analysis-worker', 'job-worker', 'whatif-worker', 'summary-worker', 'import-worker', 'open-worker'])
      expect(fs.existsSync(path.join(outDir, `${worker}.cjs`)), worker).toBe(true);
    // Just built from this tree: current (unless a source is edited during this test).
    expect(bundleState(repoRoot, outDir)).toMatchObject({ current: true });
  });

  it('an error thrown inside the bundled CLI prints a stack naming the TypeScript source and line', () => {
    // The launcher on this build (as `streamscope` runs app/dist's), made to
    // fail inside: the addon it loads for `devices` is not there.
    const dir = tempDir('launch-build');
    const script = path.join(dir, 'run.cjs');
    fs.writeFileSync(script, `require(${JSON.stringify(launcher)}).launch(${JSON.stringify(repoRoot)}, ${JSON.stringify(outDir)});\n`);
    const r = spawnSync(process.execPath, [script, 'devices'], {
      encoding: 'utf8',
      env: { ...process.env, STREAMSCOPE_CLI: 'bundle', STREAMSCOPE_ADDON_PATH: path.join(dir, 'no-addon.node') },
    });
    expect(r.status, r.stderr).toBe(70);
    expect(r.stderr).toMatch(/^streamscope: Error: StreamScope native addon not built/);
    expect(r.stderr).not.toMatch(/\.cjs:\d+/);
    const frame = /\((\/[^()]+\/profiler\/native\/addon\.ts):(\d+):\d+\)/.exec(r.stderr);
    expect(frame, r.stderr).not.toBeNull();
    const [, file, line] = frame!;
    expect(file).toBe(path.join(repoRoot, 'profiler/native/addon.ts'));
    // The line the map names is the throw.
    const text = fs.readFileSync(file!, 'utf8').split('\n')[Number(line) - 1];
    expect(text).toMatch(/throw new Error\(`StreamScope native addon not built/);
    expect(r.stderr).toMatch(/profiler\/cli\/streamscope\.ts:\d+:\d+/);
  });
});
