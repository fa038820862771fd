// Builds the Electron side into app/dist as CommonJS (Electron's Node may not
// strip TypeScript, and the sandboxed preload must be one self-contained
// CommonJS file):
//   vite build -c app/vite.config.ts                 → main.cjs, query-worker.cjs, analysis-worker.cjs, job-worker.cjs, whatif-worker.cjs, summary-worker.cjs, import-worker.cjs, open-worker.cjs, streamscope-cli.cjs (+ shared chunks)
//   vite build -c app/vite.config.ts --mode preload  → preload.cjs (one file, no chunks)
//   vite build -c app/vite.config.ts --mode bench    → bench/dist: analysis-run.cjs, whatif-worker.cjs (+ chunks): the
//     analysis bench's timed script (bench/analysis-run.ts) bundled as the CLI is, so that it times the analysis as a
//     user's `streamscope report` runs it (bench/run-bench.ts builds it)
// `npm run build:app` runs both. Native and Electron modules stay external:
// better-sqlite3 and the addon are loaded from node_modules / resources at run time.
// The first also writes streamscope-cli.stamp.json: what the CLI was built
// from, by which the `streamscope` command (profiler/cli/launch.cjs) tells
// whether the bundle is current or the sources must run.
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import { builtinModules } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { defineConfig, type Plugin } from 'vite';
import { writeStamp } from '../profiler/cli/launch.cjs';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const external = ['electron', 'better-sqlite3', /\.node$/, ...builtinModules, ...builtinModules.map((m) => `node:${m}`)];

/**
 * Stamps the CLI's build (profiler/cli/launch.cjs, writeStamp): every file the
 * bundler read for the CLI and the worker threads it starts (every entry but
 * the app's main: the modules reachable from them, bundled or tree-shaken
 * away), each with the hash of the content the bundler read (before any
 * transform), and this config. Written after the bundle.
 */
function stampCli(entries: string[]): Plugin {
  const read = new Map<string, string>();
  const files: Record<string, string> = {};
  const config = fileURLToPath(import.meta.url);
  return {
    name: 'streamscope-cli-stamp',
    enforce: 'pre',
    transform(code, id) {
      if (!id.startsWith('\0') && path.isAbsolute(id)) read.set(id, createHash('sha256').update(code).digest('hex'));
      return null;
    },
    generateBundle() {
      const seen = new Set<string>();
      const todo = [...entries];
      for (let id = todo.pop(); id !== undefined; id = todo.pop()) {
        if (seen.has(id)) continue;
        seen.add(id);
        const info = this.getModuleInfo(id);
        // External (better-sqlite3, node: modules: bare names) and virtual modules are no files of the bundle.
        if (!info || !path.isAbsolute(id)) continue;
        const hash = read.get(id);
        if (hash === undefined) this.error(`streamscope-cli-stamp: ${id} was bundled but never read through transform`);
        files[path.relative(root, id).split(path.sep).join('/')] = hash;
        for (const next of [...info.importedIds, ...info.dynamicallyImportedIds]) todo.push(next);
      }
      files[path.relative(root, config).split(path.sep).join('/')] = createHash('sha256').update(fs.readFileSync(config)).digest('hex');
    },
    writeBundle(options) {
      const changed = writeStamp(root, options.dir!, files);
      if (changed.length > 0) {
        this.warn(`${changed.join(', ')} changed while the CLI was being built: \`streamscope\` runs the sources until the next build`);
      }
    },
  };
}

export default defineConfig(({ mode }) => {
  const preload = mode === 'preload';
  const bench = mode === 'bench';
  const input: Record<string, string> = preload
    ? { preload: path.join(root, 'app/preload.ts') }
    : bench
      ? {
          'analysis-run': path.join(root, 'bench/analysis-run.ts'),
          'whatif-worker': path.join(root, 'profiler/analysis/diagnosis/whatif-worker.ts'),
        }
      : {
          main: path.join(root, 'app/main.ts'),
          'query-worker': path.join(root, 'profiler/query/query-worker.ts'),
          // Started by profiler/query/analysis-thread.ts from the folder it is bundled into.
          'analysis-worker': path.join(root, 'profiler/query/analysis-worker.ts'),
          // Started by profiler/analysis/diagnosis/job.ts (a job's report, rank by rank) likewise.
          'job-worker': path.join(root, 'profiler/analysis/diagnosis/job-worker.ts'),
          // Started by profiler/analysis/diagnosis/whatif-thread.ts (the what-ifs of a large recording's report) likewise.
          'whatif-worker': path.join(root, 'profiler/analysis/diagnosis/whatif-worker.ts'),
          // Started by profiler/job/summarize.ts (streamscope summarize, a job's report) likewise.
          'summary-worker': path.join(root, 'profiler/job/summary-worker.ts'),
          // Started by profiler/import/import-many.ts (streamscope import of several traces) likewise.
          'import-worker': path.join(root, 'profiler/import/import-worker.ts'),
          // Started by profiler/query/open-read.ts (many recordings opened at once) likewise.
          'open-worker': path.join(root, 'profiler/query/open-worker.ts'),
          'streamscope-cli': path.join(root, 'profiler/cli/streamscope.ts'),
        };
  return {
    root,
    publicDir: false,
    logLevel: 'warn',
    build: {
      // bench/dist, like app/dist, two folders below the root (profiler/native/paths.ts finds it from a chunk).
      outDir: path.join(root, bench ? 'bench/dist' : 'app/dist'),
      // The preload build runs second and must not wipe the main build.
      emptyOutDir: !preload,
      target: 'node22',
      ssr: true,
      minify: false,
      // Maps name the TypeScript sources by path, without their text: a
      // stack trace from the bundle points at profiler/…/*.ts (the
      // `streamscope` command turns them on), and Node reads every loaded
      // chunk's map at start, which their text made ~5 ms slower.
      sourcemap: true,
      reportCompressedSize: false,
      rolldownOptions: {
        input,
        external,
        output: {
          format: 'cjs',
          entryFileNames: '[name].cjs',
          // Chunks sit beside the entries: profiler/native/paths.ts finds the
          // app root two folders above its own file (app/dist/x.cjs → root).
          chunkFileNames: '[name]-[hash].cjs',
          sourcemapExcludeSources: true,
          ...(preload ? { codeSplitting: false } : {}),
        },
      },
    },
    ssr: { noExternal: true, external: ['electron', 'better-sqlite3'] },
    plugins: preload || bench ? [] : [stampCli(Object.entries(input).flatMap(([name, file]) => (name === 'main' ? [] : [file])))],
  };
});
