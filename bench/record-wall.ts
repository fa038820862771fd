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
//            last ingest, the indexes and the finishing steps.
// Added time is taken within each round (record − plain, floor − plain) and
// the median over rounds is compared: target record added ≤ 1.1 × floor added.
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
import { median } from './stats.ts';

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
  const lines: string[] = [];
  const result: Record<string, unknown> = {};
  try {
    for (const p of programs) {
      const plain: number[] = [];
      const floor: number[] = [];
      const rec: Timed[] = [];
      /** The CLI started and ended with nothing to do (`--version`): the start + exit part without a recording. */
      const cliAlone: number[] = [];
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
        async () => {
          const file = path.join(dir, `${p.name}-${rec.length}.sqlite`);
          rec.push(await timed([process.execPath, cli, 'record', '--progress', 'json', '-o', file, '--', ...p.argv], {}));
          fs.rmSync(file, { force: true });
        },
      ];
      // One untimed run of each first: the page cache, the driver's JIT cache, Python's bytecode.
      for (const m of modes) await m();
      plain.length = floor.length = rec.length = cliAlone.length = 0;
      for (let i = 0; i < rounds; i++) for (let k = 0; k < modes.length; k++) await modes[(i + k) % modes.length]!();

      const floorAdded = median(floor.map((f, i) => f - plain[i]!));
      const recAdded = median(rec.map((r, i) => r.wallMs - plain[i]!));
      // The four parts add up to the wall time.
      const parts = rec.map((r, i) => {
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
      const part = (k: 'start' | 'setup' | 'target' | 'targetOverFloor' | 'finish') => median(parts.map((x) => x[k]));
      result[p.name] = {
        argv: p.argv,
        rounds,
        wallMs: { plain, floor, record: rec.map((r) => r.wallMs), cliAlone },
        marks: rec.map((r) => r.marks),
        floorAddedMs: floorAdded,
        recordAddedMs: recAdded,
        ratio: recAdded / floorAdded,
        target: 1.1,
        medianPartsMs: {
          startAndExit: part('start'),
          setup: part('setup'),
          target: part('target'),
          targetOverFloor: part('targetOverFloor'),
          finish: part('finish'),
        },
      };
      const f = (xs: number[]) => xs.map((x) => (x / 1000).toFixed(2)).join(' ');
      lines.push(`record-wall  ${p.name}: ${p.argv.join(' ')} (${rounds} interleaved rounds; s)`);
      lines.push(`            plain    ${(median(plain) / 1000).toFixed(2)}  [${f(plain)}]`);
      lines.push(`            floor    ${(median(floor) / 1000).toFixed(2)}  [${f(floor)}]  added ${(floorAdded / 1000).toFixed(2)}`);
      lines.push(
        `            record   ${(median(rec.map((r) => r.wallMs)) / 1000).toFixed(2)}  [${f(rec.map((r) => r.wallMs))}]  added ${(recAdded / 1000).toFixed(2)}`,
      );
      lines.push(
        `            record's parts (medians, s): CLI start + exit ${(part('start') / 1000).toFixed(2)} (--version alone ${(median(cliAlone) / 1000).toFixed(2)}), setup ${(part('setup') / 1000).toFixed(2)}, ` +
          `target ${(part('target') / 1000).toFixed(2)} (floor's run + ${(part('targetOverFloor') / 1000).toFixed(2)}), finish ${(part('finish') / 1000).toFixed(2)}`,
      );
      lines.push(`            record added / floor added = ${(recAdded / floorAdded).toFixed(2)} (target ≤ 1.10)`);
    }
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
  return { result, lines };
}
