// A generated recording for the renderer benchmark and the query tests:
// N GPU operations (kernels, and every fifth a copy, HtoD or DtoH; 1–200 µs
// each, 0–50 µs gaps) over S non-blocking streams spread over D devices
// (1 or 2), each with the API call that launched it (same correlation id,
// issued a few µs before, one issuing thread per stream).
//
// Written through the importers' RecordingWriter: createRecording, indexes
// dropped for the load (beginBulkLoad), prepared inserts in 50k-row
// transactions, then zones and indexes (endBulkLoad). Lane by lane, so each
// zone holds one stream's consecutive rows, as the native ingest makes them.
// About 5 s per million operations on the 2-core development machine.
// With `collectiveEvery: n`, the last stream is a data-parallel job's NCCL
// stream instead: one all-reduce kernel per n operations (the merge
// benchmark's ranks, bench/generate-ranks.ts).
//
//   node bench/generate-recording.ts -o FILE [--ops 10000000] [--streams 64] [--devices 1] [--seed 12345]
import path from 'node:path';
import { parseArgs } from 'node:util';
import { RecordingWriter } from '../profiler/import/recording-writer.ts';

export interface GenerateOptions {
  devices?: 1 | 2;
  /** Same seed, same recording. */
  seed?: number;
  /** One NCCL all-reduce per this many operations, on the last stream (the others share the rest). */
  collectiveEvery?: number;
  /** Meta of the recording (host, origin_ns, …) beside the command. */
  meta?: Record<string, string>;
}

/** NCCL 2.19+'s float all-reduce kernel, as CUPTI names it (mangled). */
export const NCCL_ALL_REDUCE = '_Z39ncclDevKernel_AllReduce_Sum_f32_RING_LL24ncclDevKernelArgsStorageILm4096EE';

const PID = 1;
const CONTEXT = 1;
/** cudaStreamNonBlocking, as a program that creates its own streams has them. */
const NON_BLOCKING = 2;

export function generate(out: string, ops: number, streams: number, opts: GenerateOptions = {}): void {
  const devices = opts.devices ?? 1;
  const w = new RecordingWriter(out, { overwrite: true, originNs: 0 });
  for (let d = 0; d < devices; d++) w.device(d, { name: `generated GPU ${d}`, smCount: 132, ccMajor: 9, ccMinor: 0, totalMemoryBytes: 80 * 2 ** 30 });
  // A linear congruential generator: deterministic and cheap (Math.random is neither seedable nor needed).
  let seed = (opts.seed ?? 12345) >>> 0;
  const rnd = () => (seed = (Math.imul(seed, 1664525) + 1013904223) >>> 0) / 2 ** 32;
  const collectives = opts.collectiveEvery ? Math.floor(ops / opts.collectiveEvery) : 0;
  const computeStreams = collectives ? streams - 1 : streams;
  const perStream = Math.ceil((ops - collectives) / computeStreams);
  let corr = 1;
  for (let s = 0; s < streams && corr <= ops; s++) {
    const device = s % devices;
    const stream = 100 + s; // CUPTI stream ids of created streams start above the default streams'
    const nccl = collectives > 0 && s === streams - 1;
    w.streamFacts(device, CONTEXT + device, stream, PID, { flags: NON_BLOCKING });
    let t = Math.floor(rnd() * 1000);
    for (let i = 0; i < (nccl ? collectives : perStream) && corr <= ops; i++) {
      const dur = 1000 + Math.floor(rnd() * 199_000);
      const lane = { start: t, end: t + dur, device, context: CONTEXT + device, stream, pid: PID, correlation: corr };
      const copy = !nccl && i % 5 === 4;
      if (nccl) {
        w.kernel({ ...lane, name: NCCL_ALL_REDUCE, grid: [32, 1, 1], block: [512, 1, 1], registers: 96 });
      } else if (copy) {
        const h2d = i % 10 === 4;
        // ~20 GB/s: bytes per ns × 20.
        w.memcpy({ ...lane, bytes: dur * 20, copyKind: h2d ? 1 : 2, srcKind: h2d ? 2 : 3, dstKind: h2d ? 3 : 2, async: true });
      } else {
        w.kernel({ ...lane, name: `kernel_${i % 7}`, grid: [64 + (i % 3) * 64, 1, 1], block: [256, 1, 1], registers: 32 });
      }
      // Issued 5 µs before it starts; one issuing thread per stream keeps each thread's calls in time order, as recorded ones are.
      const issue = t - 5000;
      w.apiCall({
        start: issue,
        end: issue + 3000,
        pid: PID,
        tid: 1000 + s,
        name: copy ? 'cudaMemcpyAsync' : 'cudaLaunchKernel',
        domain: 1,
        cbid: copy ? 41 : 211,
        correlation: corr,
        returnValue: 0,
      });
      corr++;
      // The NCCL stream's collectives are spread over the compute streams' span.
      t += dur + Math.floor(rnd() * 50_000) + (nccl ? Math.floor((perStream / collectives) * 110_000) : 0);
    }
  }
  w.setCommand(PID, 'generated');
  w.finish({ command: `generated: ${ops} operations over ${streams} streams on ${devices} device(s)`, ...opts.meta });
}

// Run as a script (not when bench/run-bench.ts or a test imports generate()).
if (process.argv[1] && path.resolve(process.argv[1]) === import.meta.filename) {
  const { values } = parseArgs({
    options: {
      output: { type: 'string', short: 'o' },
      ops: { type: 'string', default: '10000000' },
      streams: { type: 'string', default: '64' },
      devices: { type: 'string', default: '1' },
      seed: { type: 'string', default: '12345' },
    },
  });
  const ops = Number(values.ops);
  const streams = Number(values.streams);
  const devices = Number(values.devices);
  if (!values.output || !(Number.isInteger(ops) && ops > 0) || !(Number.isInteger(streams) && streams > 0) || (devices !== 1 && devices !== 2)) {
    process.stderr.write('usage: node bench/generate-recording.ts -o FILE [--ops N>0] [--streams S>0] [--devices 1|2] [--seed N]\n');
    process.exit(2);
  }
  const t = performance.now();
  generate(values.output, ops, streams, { devices, seed: Number(values.seed) });
  process.stderr.write(
    `generated ${ops.toLocaleString('en-US')} operations over ${streams} streams on ${devices} device(s) in ${((performance.now() - t) / 1000).toFixed(1)} s → ${values.output}\n`,
  );
}
