// `--only record-wall` (GPU only): what `streamscope record` adds to the wall
// time of a short program, against the CUPTI floor on the same program.
//
// Each program runs, in interleaved rounds whose order rotates, three ways:
//   plain    the program alone;
//   floor    with the collector injected and its records thrown away
//            (STREAMSCOPE_DISCARD=1: CUPTI's own cost, the same activity
//            kinds and callbacks, nothing written);
//   record   `streamscope record --progress json -o X -- program`, as a user
//            runs it: the CLI starting, preflight, the target under the
//            collector with its streams ingested while it runs, then the
//            last ingest, the indexes and the finishing steps;
//   bundled  the same through the CLI bundled as one CommonJS file
//            (app/dist/streamscope-cli.cjs, `npm run build:app`), what the
//            desktop app's record jobs run: no TypeScript to strip and no
//            module graph to resolve at start. Only where it is built.
// Added time is taken within each round (record − plain, floor − plain),
// then its trimmed mean over rounds with a 90% interval (stats.ts): target
// record added ≤ 1.1 × floor added.
// record's own progress lines split its wall time into where it goes:
//   start    the CLI process starting up to its first line (Node, modules),
//            and exiting after its last;
//   setup    preflight and the recording file, up to the target's start;
//   target   the target's run under the collector (its excess over the
//            floor's run is the collector writing and the ingest beside it);
//   finish   after the target exited: the last ingest, indexes, finishing.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { collectorLibraryPath, repoRoot } from '../profiler/native/paths.ts';
import { PROGRESS_MARKER } from '../profiler/record/progress.ts';
import { median, pairedAdded } from './stats.ts';

export interface WallProgram {
  name: string;
  argv: string[];
}

interface Timed {
  wallMs: number;
  /** record only: elapsedMs of its first line, of the first `running`, of `finishing`, of `done`. */
  marks?: { first: number; running: number; finishing: number; done: number };
}

/** Runs argv to its end; wall time from spawn to exit, and record's progress lines when it is record. */
function timed(argv: string[], env: NodeJS.ProcessEnv): Promise<Timed> {
  return new Promise((resolve, reject) => {
    const t0 = performance.now();
    const child = spawn(argv[0]!, argv.slice(1), { env: { ...process.env, ...env }, stdio: ['ignore', 'ignore', 'pipe'] });
    let err = '';
    child.stderr.on('data', (d: Buffer) => (err += d.toString()));
    child.on('error', reject);
    child.on('exit', (code) => {
      const wallMs = performance.now() - t0;
      if (code !== 0) return reject(new Error(`${argv.join(' ')} exited ${code}: ${err.slice(-2000)}`));
      const lines = err
        .split('\n')
        .filter((l) => l.startsWith(PROGRESS_MARKER))
        .map((l) => JSON.parse(l) as { phase: string; elapsedMs: number });
      if (lines.length === 0) return resolve({ wallMs });
      const at = (phase: string) => lines.find((l) => l.phase === phase)?.elapsedMs ?? NaN;
      resolve({ wallMs, marks: { first: lines[0]!.elapsedMs, running: at('running'), finishing: at('finishing'), done: at('done') } });
    });
  });
}

export async function benchRecordWall(programs: WallProgram[], rounds: number): Promise<{ result: unknown; lines: string[] }> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ss-wall-'));
  const cli = path.join(repoRoot, 'profiler/cli/streamscope.ts');
  const bundledCli = path.join(repoRoot, 'app/dist/streamscope-cli.cjs');
  const lines: string[] = [];
  const result: Record<string, unknown> = {};
  try {
    for (const p of programs) {
      const plain: number[] = [];
      const floor: number[] = [];
      const rec: Timed[] = [];
      /** The CLI started and ended with nothing to do (`--version`): the start + exit part without a recording. */
      const cliAlone: number[] = [];
      const bundled: Timed[] = [];
      /** `record` of the program through one CLI entry, each run appended to `runs`. */
      const recordThrough = (entry: string, runs: Timed[], tag: string) => async () => {
        const file = path.join(dir, `${p.name}-${tag}-${runs.length}.sqlite`);
        runs.push(await timed([process.execPath, entry, 'record', '--progress', 'json', '-o', file, '--', ...p.argv], {}));
        fs.rmSync(file, { force: true });
      };
      const modes = [
        async () => cliAlone.push((await timed([process.execPath, cli, '--version'], {})).wallMs),
        async () => plain.push((await timed(p.argv, {})).wallMs),
        async () => {
          const out = fs.mkdtempSync(path.join(dir, 'floor-'));
          floor.push(
            (
              await timed(p.argv, {
                CUDA_INJECTION64_PATH: collectorLibraryPath(),
                NVTX_INJECTION64_PATH: collectorLibraryPath(),
                STREAMSCOPE_OUTPUT_DIR: out,
                STREAMSCOPE_DISCARD: '1',
              })
            ).wallMs,
          );
          fs.rmSync(out, { recursive: true, force: true });
        },
        recordThrough(cli, rec, 'record'),
      ];
      if (fs.existsSync(bundledCli)) modes.push(recordThrough(bundledCli, bundled, 'bundled'));
      // One untimed run of each first: the page cache, the driver's JIT cache, Python's bytecode.
      for (const m of modes) await m();
      plain.length = floor.length = rec.length = cliAlone.length = bundled.length = 0;
      for (let i = 0; i < rounds; i++) for (let k = 0; k < modes.length; k++) await modes[(i + k) % modes.length]!();

      // Trimmed means of the per-round differences, with their 90% intervals
      // (stats.ts): the floor's added time is near zero on these programs, so
      // a ratio to it says little; the intervals say what is measurable.
      const floorEst = pairedAdded(plain, floor);
      const summarize = (runs: Timed[]) => {
        const est = pairedAdded(
          plain,
          runs.map((r) => r.wallMs),
        );
        // The four parts add up to the wall time.
        const parts = runs.map((r, i) => {
          const m = r.marks!;
          return {
            // The CLI's clock starts once Node is up and the command's modules are loaded.
            start: r.wallMs - (m.done - m.first),
            setup: m.running - m.first,
            target: m.finishing - m.running,
            targetOverFloor: m.finishing - m.running - floor[i]!,
            finish: m.done - m.finishing,
          };
        });
        const part = (k: keyof (typeof parts)[number]) => median(parts.map((x) => x[k]));
        return {
          est,
          json: {
            wallMs: runs.map((r) => r.wallMs),
            marks: runs.map((r) => r.marks),
            addedMs: est.added,
            addedInterval90Ms: [est.low, est.high],
            ratio: est.added / floorEst.added,
            medianPartsMs: {
              startAndExit: part('start'),
              setup: part('setup'),
              target: part('target'),
              targetOverFloor: part('targetOverFloor'),
              finish: part('finish'),
            },
          },
        };
      };
      const recorded = summarize(rec);
      const viaBundle = bundled.length > 0 ? summarize(bundled) : null;
      result[p.name] = {
        argv: p.argv,
        rounds,
        wallMs: { plain, floor, cliAlone },
        floorAddedMs: floorEst.added,
        floorAddedInterval90Ms: [floorEst.low, floorEst.high],
        estimator: 'trimmed mean (10% each end) of per-round differences; interval: bootstrap over rounds',
        target: 1.1,
        record: recorded.json,
        bundled: viaBundle?.json ?? null,
      };
      const sec = (ms: number) => (ms / 1000).toFixed(2);
      const f = (xs: number[]) => xs.map(sec).join(' ');
      const interval = (e: { low: number; high: number }) => `(90% ${sec(e.low)} – ${sec(e.high)})`;
      lines.push(`record-wall  ${p.name}: ${p.argv.join(' ')} (${rounds} interleaved rounds; s)`);
      lines.push(`            plain    ${sec(median(plain))}  [${f(plain)}]`);
      lines.push(`            floor    ${sec(median(floor))}  [${f(floor)}]  added ${sec(floorEst.added)} ${interval(floorEst)}`);
      for (const [name, r] of [
        ['record ', recorded],
        ['bundled', viaBundle],
      ] as const) {
        if (!r) continue;
        const parts = r.json.medianPartsMs;
        lines.push(`            ${name}  ${sec(median(r.json.wallMs))}  [${f(r.json.wallMs)}]  added ${sec(r.est.added)} ${interval(r.est)}`);
        lines.push(
          `              parts (medians): CLI start + exit ${sec(parts.startAndExit)}, setup ${sec(parts.setup)}, ` +
            `target ${sec(parts.target)} (floor's run + ${sec(parts.targetOverFloor)}), finish ${sec(parts.finish)}; added / floor added = ${r.json.ratio.toFixed(2)} (target ≤ 1.10)`,
        );
      }
      lines.push(`            --version alone: ${sec(median(cliAlone))} s`);
    }
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
  return { result, lines };
}
