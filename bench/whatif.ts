// `npm run bench -- --only whatif`: the what-if replay of 10 M operations
// (issue 16: host model + replay ≤ 4 s together on the 2-core development
// VM), on test/helpers/synthetic-replay.ts's recording (64 streams, a copy,
// a kernel and a copy in turn, a device sync every 1000 ops), as
// bench/responsiveness.ts and test/analysis/replay.test.ts run it.
//
// Each round runs in a process of its own (a cold JIT and a fresh heap, as
// `streamscope report` meets them) and measures, in this order:
//  anchor      one plain pass over the 10 M ops' columns the replay reads
//              (kind, category, detail, device, stream, start, end, bytes,
//              each op's call and that call's start and end): the floor of
//              any replay, measured beside it so that the machine's load
//              shows in both;
//  host model  hostModel(trace, host) (replay-host.ts), inferred once per recording;
//  replay      replay(trace, host) (replay.ts), the unchanged recording.
// Wall and CPU seconds of each, and the load average before the round.
//
// --whatif-against DIR alternates every round with the same round run on
// another checkout's code (DIR holds its profiler/ and test/helpers/: e.g.
// `git archive 00bd4c3 profiler test/helpers | tar -x -C DIR`, with
// node_modules and native/addon/build linked in), so that before and after
// meet the same load.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { pathToFileURL } from 'node:url';
import type { Host } from '../profiler/analysis/host.ts';
import type { Trace } from '../profiler/analysis/trace.ts';
import { median } from './stats.ts';

/** The goal for host model + replay together (s). */
export const WHATIF_GOAL_SECONDS = 4;

export interface WhatifRound {
  /** Whose code ran: 'this' tree, or the --whatif-against checkout. */
  code: string;
  load: number;
  anchorSeconds: number;
  hostModelSeconds: number;
  replaySeconds: number;
  totalSeconds: number;
  hostModelCpuSeconds: number;
  replayCpuSeconds: number;
  gpuSpanNs: number;
}

/** One plain pass over the columns the replay reads: a sum, so that nothing is left out. */
function anchorPass(trace: Trace, host: Host): number {
  const { kind, category, detail, device, stream, start, end, bytes, length: n } = trace.ops;
  const { opCall } = host;
  const callStart = host.calls.start;
  const callEnd = host.calls.end;
  let acc = 0;
  for (let i = 0; i < n; i++) {
    const k = opCall[i]!;
    acc += kind[i]! + category[i]! + detail[i]! + device[i]! + stream[i]! + (end[i]! - start[i]!) + bytes[i]! + (k >= 0 ? callEnd[k]! - callStart[k]! : 0);
  }
  return acc;
}

/** One round in this process, with the replay's modules from `root`. */
async function round(root: string): Promise<Omit<WhatifRound, 'code' | 'load'>> {
  // The replay's modules where `root` has them: analysis/replay/ since issue 28, analysis/ before (an older checkout).
  const from = (...paths: string[]) => import(pathToFileURL(path.join(root, paths.find((p) => fs.existsSync(path.join(root, p))) ?? paths[0]!)).href);
  const { syntheticReplay } = await from('test/helpers/synthetic-replay.ts');
  const { hostModel } = await from('profiler/analysis/replay/replay-host.ts', 'profiler/analysis/replay-host.ts');
  const { replay } = await from('profiler/analysis/replay/replay.ts', 'profiler/analysis/replay.ts');
  const { trace, host } = syntheticReplay(10_000_000, 64, 1000) as { trace: Trace; host: Host };
  const timed = <T>(run: () => T): { value: T; seconds: number; cpuSeconds: number } => {
    const c = process.cpuUsage();
    const t = performance.now();
    const value = run();
    const seconds = (performance.now() - t) / 1000;
    const u = process.cpuUsage(c);
    return { value, seconds, cpuSeconds: (u.user + u.system) / 1e6 };
  };
  const anchor = timed(() => anchorPass(trace, host));
  const model = timed(() => hostModel(trace, host));
  const r = timed(() => replay(trace, host) as { gpuSpanNs: number });
  return {
    anchorSeconds: anchor.seconds,
    hostModelSeconds: model.seconds,
    replaySeconds: r.seconds,
    totalSeconds: model.seconds + r.seconds,
    hostModelCpuSeconds: model.cpuSeconds,
    replayCpuSeconds: r.cpuSeconds,
    gpuSpanNs: r.value.gpuSpanNs,
  };
}

function roundInChild(root: string, code: string): WhatifRound {
  const load = os.loadavg()[0]!;
  const r = spawnSync(process.execPath, [import.meta.filename, '--round', root], { encoding: 'utf8', maxBuffer: 1 << 20 });
  if (r.status !== 0) throw new Error(`what-if round failed: ${r.stderr}`);
  return { code, load, ...(JSON.parse(r.stdout.trim().split('\n').pop()!) as Omit<WhatifRound, 'code' | 'load'>) };
}

export function benchWhatif(rounds: number, against?: string): { result: Record<string, unknown>; lines: string[] } {
  const here = path.resolve(import.meta.dirname, '..');
  const runs: WhatifRound[] = [];
  for (let i = 0; i < rounds; i++) {
    // Alternated, the other code first every second round.
    const order = against ? (i % 2 === 0 ? [here, against] : [against, here]) : [here];
    for (const root of order) runs.push(roundInChild(root, root === here ? 'this' : 'against'));
  }
  const summary = (code: string) => {
    const rs = runs.filter((r) => r.code === code);
    if (!rs.length) return null;
    const total = median(rs.map((r) => r.totalSeconds));
    const anchor = median(rs.map((r) => r.anchorSeconds));
    return {
      rounds: rs.length,
      medianHostModelSeconds: median(rs.map((r) => r.hostModelSeconds)),
      medianReplaySeconds: median(rs.map((r) => r.replaySeconds)),
      medianTotalSeconds: total,
      medianCpuSeconds: median(rs.map((r) => r.hostModelCpuSeconds + r.replayCpuSeconds)),
      medianAnchorSeconds: anchor,
      overGoal: total / WHATIF_GOAL_SECONDS,
      overAnchor: total / anchor,
      within: rs.filter((r) => r.totalSeconds <= WHATIF_GOAL_SECONDS).length,
    };
  };
  const result = { goalSeconds: WHATIF_GOAL_SECONDS, against: against ?? null, runs, this: summary('this'), againstCode: summary('against') };
  const lines = [`whatif    replay of 10 M operations (64 streams), host model + replay, ${rounds} rounds, each in a process of its own:`];
  for (const r of runs)
    lines.push(
      `          ${r.code === 'this' ? 'this tree' : 'against  '}  host model ${r.hostModelSeconds.toFixed(2)} s + replay ${r.replaySeconds.toFixed(2)} s = ${r.totalSeconds.toFixed(2)} s ` +
        `(CPU ${r.hostModelCpuSeconds.toFixed(2)} + ${r.replayCpuSeconds.toFixed(2)} s); anchor (one pass over the columns) ${r.anchorSeconds.toFixed(3)} s; load ${r.load.toFixed(1)}`,
    );
  for (const [label, s] of [
    ['this tree', result.this],
    ['against', result.againstCode],
  ] as const)
    if (s)
      lines.push(
        `          ${label}: median ${s.medianTotalSeconds.toFixed(2)} s = ${s.overGoal.toFixed(2)} × the ${WHATIF_GOAL_SECONDS} s goal (${s.within}/${s.rounds} within), ` +
          `${s.overAnchor.toFixed(0)} × the anchor; CPU ${s.medianCpuSeconds.toFixed(2)} s`,
      );
  return { result, lines };
}

// A round's child process: prints its figures as the last line.
if (process.argv[2] === '--round') console.log(JSON.stringify(await round(process.argv[3]!)));
