// Builds the Electron side into app/dist as CommonJS (Electron's Node may not
// strip TypeScript, and the sandboxed preload must be one self-contained
// CommonJS file):
//   vite build -c app/vite.config.ts                 → main.cjs, query-worker.cjs, analysis-worker.cjs, job-worker.cjs, summary-worker.cjs, streamscope-cli.cjs (+ shared chunks)
//   vite build -c app/vite.config.ts --mode preload  → preload.cjs (one file, no chunks)
// `npm run build:app` runs both. Native and Electron modules stay external:
// better-sqlite3 and the addon are loaded from node_modules / resources at run time.
import { builtinModules } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vite';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const external = ['electron', 'better-sqlite3', /\.node$/, ...builtinModules, ...builtinModules.map((m) => `node:${m}`)];

export default defineConfig(({ mode }) => {
  const preload = mode === 'preload';
  const input: Record<string, string> = preload
    ? { preload: path.join(root, 'app/preload.ts') }
    : {
        main: path.join(root, 'app/main.ts'),
        'query-worker': path.join(root, 'profiler/query/query-worker.ts'),
        // Started by profiler/query/analysis-thread.ts from the folder it is bundled into.
        'analysis-worker': path.join(root, 'profiler/query/analysis-worker.ts'),
        // Started by profiler/analysis/diagnosis/job.ts (a job's report, rank by rank) likewise.
        'job-worker': path.join(root, 'profiler/analysis/diagnosis/job-worker.ts'),
        // Started by profiler/job/summarize.ts (streamscope summarize, a job's report) likewise.
        'summary-worker': path.join(root, 'profiler/job/summary-worker.ts'),
        'streamscope-cli': path.join(root, 'profiler/cli/streamscope.ts'),
      };
  return {
    root,
    publicDir: false,
    logLevel: 'warn',
    build: {
      outDir: path.join(root, 'app/dist'),
      // The preload build runs second and must not wipe the main build.
      emptyOutDir: !preload,
      target: 'node22',
      ssr: true,
      minify: false,
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
          ...(preload ? { codeSplitting: false } : {}),
        },
      },
    },
    ssr: { noExternal: true, external: ['electron', 'better-sqlite3'] },
  };
});
