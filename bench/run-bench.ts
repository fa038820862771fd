// `npm run bench`: StreamScope's speed targets, measured side by side in
// one run, with the ratios printed last.
//
//  ingest    record stream → SQLite through the native ingest, on a synthetic
//            launch-bound stream (the C++ encoder's --bench-launches mode).
//            Target: ≥ 1.5 M records/s on the 2-core development machine.
//  overhead  (GPU only) per-launch cost of a launch-bound loop of tiny kernels
//            over 4 streams: no tracing / CUPTI alone with records discarded
//            (the floor: identical CUPTI setup, buffers thrown away) /
//            StreamScope / torch.profiler on an equivalent PyTorch loop.
//            Target: StreamScope's added time per launch ≤ 1.1 × the floor's.
//
// Options: --only ingest|overhead, --launches N (overhead loop), --pairs N,
// --ingest-launches N, --json FILE (write the results).
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { devices, Ingest } from '../profiler/native/addon.ts';
import { collectorLibraryPath, repoRoot, runnerPath, syntheticStreamToolPath } from '../profiler/native/paths.ts';
import { decodeHeader } from '../profiler/record/decoder.ts';
import { beginBulkLoad, createRecording, endBulkLoad, openRecording } from '../profiler/store/database.ts';

const { values } = parseArgs({
  options: {
    only: { type: 'string' },
    launches: { type: 'string', default: '300000' },
    pairs: { type: 'string', default: '8' },
    'ingest-launches': { type: 'string', default: '2000000' },
    json: { type: 'string' },
  },
});

const results: Record<string, unknown> = { host: os.hostname(), cpus: os.cpus().length, date: new Date().toISOString() };
const lines: string[] = [];
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

async function benchIngest(): Promise<void> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ss-bench-'));
  try {
    const stream = path.join(dir, 'bench.ssr');
    execFileSync(syntheticStreamToolPath(), ['--out', stream, '--bench-launches', values['ingest-launches']!]);
    const bytes = fs.statSync(stream).size;
    const header = decodeHeader(new Uint8Array(fs.readFileSync(stream).subarray(0, 64)), stream);
    const runs: { seconds: number; tablesSeconds: number; records: number }[] = [];
    execFileSync('sync');
    for (let i = 0; i < 5; i++) {
      const out = path.join(dir, `r${i}.sqlite`);
      const db = createRecording(out);
      // The recorder's path: indexes dropped for the load, built after.
      const t0 = performance.now();
      const indexSql = beginBulkLoad(db);
      db.close();
      const ingest = new Ingest(out, { originNs: header.origin_ns });
      const p = await ingest.ingestFile(stream, { final: true });
      const t1 = performance.now();
      await ingest.finish({ finalSql: indexSql });
      const again = openRecording(out);
      endBulkLoad(again);
      again.close();
      const t2 = performance.now();
      runs.push({ seconds: (t2 - t0) / 1000, tablesSeconds: (t1 - t0) / 1000, records: p.records });
      // Each run writes ~250 MB: drop it and let the kernel write back what
      // is dirty before the next run, or later runs pay for earlier ones
      // (measured: 1.7 s first run, 3.4 s fifth, on this VM).
      fs.rmSync(out, { force: true });
      execFileSync('sync');
    }
    // Median and slowest, not only the best: runs of the same work on this
    // 2-core VM differ by up to 40%, and the target must hold for the slow ones.
    const bySpeed = [...runs].sort((a, b) => a.seconds - b.seconds);
    const mid = bySpeed[Math.floor(bySpeed.length / 2)]!;
    const slow = bySpeed[bySpeed.length - 1]!;
    const rate = mid.records / mid.seconds;
    const slowRate = slow.records / slow.seconds;
    results.ingest = { records: mid.records, streamBytes: bytes, runs, recordsPerSecond: rate, slowestRecordsPerSecond: slowRate, target: 1.5e6 };
    lines.push(`ingest    ${mid.records.toLocaleString('en-US')} records (${(bytes / 2 ** 20).toFixed(0)} MiB) into an indexed SQLite recording (rows + zones + finish), ${runs.length} runs:`);
    lines.push(`          ${bySpeed.map((r) => `${r.seconds.toFixed(2)} s`).join(', ')} (rows alone ${bySpeed.map((r) => r.tablesSeconds.toFixed(2)).join(', ')} s)`);
    lines.push(`          median ${(rate / 1e6).toFixed(2)} M records/s = ${(rate / 1.5e6).toFixed(2)} × the 1.5 M/s target; slowest ${(slowRate / 1e6).toFixed(2)} M/s = ${(slowRate / 1.5e6).toFixed(2)} ×`);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

function runLoop(env: NodeJS.ProcessEnv, launches: string): number {
  const out = execFileSync(runnerPath(), ['--workload', 'launch-loop', '--scenario', 'concurrent', '--streams', '4', '--iterations', launches],
    { env: { ...process.env, ...env }, encoding: 'utf8' });
  const m = /us_per_launch=([\d.]+)/.exec(out);
  if (!m) throw new Error(`launch-loop printed no timing:\n${out}`);
  return Number(m[1]);
}

function benchOverhead(): void {
  const launches = values.launches!;
  const pairs = Number(values.pairs);
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ss-bench-'));
  const cli = path.join(repoRoot, 'profiler/cli/streamscope.ts');
  const plain: number[] = [];
  const floor: number[] = [];
  const streamscope: number[] = [];
  try {
    // Interleaved, so drifts in clocks or load hit every mode alike; the
    // order rotates every round so that no mode always runs first.
    const modes = [
      () => plain.push(runLoop({}, launches)),
      () => {
        const floorDir = fs.mkdtempSync(path.join(dir, 'floor-'));
        floor.push(runLoop({ CUDA_INJECTION64_PATH: collectorLibraryPath(), STREAMSCOPE_OUTPUT_DIR: floorDir, STREAMSCOPE_DISCARD: '1' }, launches));
      },
      () => {
        const rec = path.join(dir, `run${streamscope.length}.sqlite`);
        const out = execFileSync(process.execPath, [cli, 'record', '-q', '-o', rec, '--workload', 'launch-loop', '--scenario', 'concurrent',
          '--streams', '4', '--iterations', launches], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] });
        streamscope.push(Number(/us_per_launch=([\d.]+)/.exec(out)![1]));
        fs.rmSync(rec, { force: true });
      },
    ];
    for (let i = 0; i < pairs; i++) {
      for (let k = 0; k < modes.length; k++) modes[(i + k) % modes.length]!();
    }
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
  let torch: { plain: number[]; profiled: number[] } | null = null;
  try {
    const out = execFileSync('python3', [path.join(repoRoot, 'bench/torch_launch_loop.py'), '--launches', launches, '--pairs', String(Math.min(pairs, 3))], { encoding: 'utf8' });
    const j = JSON.parse(out.trim().split('\n').at(-1)!) as { torch_us_per_launch_plain: number[]; torch_us_per_launch_profiled: number[] };
    torch = { plain: j.torch_us_per_launch_plain, profiled: j.torch_us_per_launch_profiled };
  } catch (err) {
    lines.push(`overhead  torch.profiler comparison not run: ${(err as Error).message.split('\n')[0]}`);
  }
  // Added cost per launch, taken within each interleaved round (so drifts in
  // clocks or load between rounds cancel), then the median over rounds.
  const base = median(plain);
  const floorAdded = median(floor.map((f, i) => f - plain[i]!));
  const ssAdded = median(streamscope.map((x, i) => x - plain[i]!));
  results.overhead = { launches: Number(launches), pairs, usPerLaunch: { plain, floor, streamscope }, torch, floorAddedUs: floorAdded, streamscopeAddedUs: ssAdded, ratio: ssAdded / floorAdded, target: 1.1 };
  const fmt = (xs: number[]) => xs.map((x) => x.toFixed(2)).join(' ');
  lines.push(`overhead  µs per launch (${launches} launches over 4 streams, ${pairs} interleaved rounds; medians; added = median of per-round differences)`);
  lines.push(`            no tracing      ${base.toFixed(2)}   [${fmt(plain)}]`);
  lines.push(`            CUPTI floor     ${median(floor).toFixed(2)}   [${fmt(floor)}]  added ${floorAdded.toFixed(2)}`);
  lines.push(`            StreamScope     ${median(streamscope).toFixed(2)}   [${fmt(streamscope)}]  added ${ssAdded.toFixed(2)}`);
  if (torch) {
    const tAdded = median(torch.profiled) - median(torch.plain);
    lines.push(`            torch (plain)   ${median(torch.plain).toFixed(2)}   [${fmt(torch.plain)}]`);
    lines.push(`            torch.profiler  ${median(torch.profiled).toFixed(2)}   [${fmt(torch.profiled)}]  added ${tAdded.toFixed(2)}`);
  }
  lines.push(`          StreamScope added / floor added = ${(ssAdded / floorAdded).toFixed(2)} (target ≤ 1.10)`);
}

if (values.only !== 'overhead') await benchIngest();
if (values.only !== 'ingest') {
  const inv = devices();
  if (inv.devices.length === 0) lines.push(`overhead  skipped: no GPU here (${inv.error})`);
  else benchOverhead();
}
process.stdout.write(lines.join('\n') + '\n');
if (values.json) fs.writeFileSync(values.json, JSON.stringify(results, null, 2) + '\n');
