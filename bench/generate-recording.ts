// A generated recording for the renderer benchmark: N operations (kernels
// and copies, 1–200 µs, with gaps) over S streams on one device, each with
// its launch call, written through the importers' RecordingWriter (lane by
// lane, so zones are tight, as the native ingest makes them).
//   node bench/generate-recording.ts -o FILE [--ops 10000000] [--streams 64]
import path from 'node:path';
import { parseArgs } from 'node:util';
import { RecordingWriter } from '../profiler/import/recording-writer.ts';

export function generate(out: string, ops: number, streams: number): void {
  const w = new RecordingWriter(out, { overwrite: true, originNs: 0 });
  w.device(0, { name: 'generated GPU', smCount: 132, ccMajor: 9, ccMinor: 0 });
  let seed = 12345;
  const rnd = () => ((seed = (Math.imul(seed, 1664525) + 1013904223) >>> 0) / 2 ** 32);
  const perStream = Math.ceil(ops / streams);
  let corr = 1;
  for (let s = 0; s < streams; s++) {
    let t = Math.floor(rnd() * 1000);
    for (let i = 0; i < perStream && corr <= ops; i++) {
      const dur = 1000 + Math.floor(rnd() * 199_000);
      const issue = t - 5000;
      const pid = 1;
      if (i % 5 === 4) {
        w.memcpy({ start: t, end: t + dur, device: 0, context: 1, stream: 100 + s, pid, correlation: corr, bytes: dur * 20, copyKind: i % 10 === 4 ? 1 : 2, srcKind: 2, dstKind: 3, async: true });
      } else {
        w.kernel({ start: t, end: t + dur, device: 0, context: 1, stream: 100 + s, pid, correlation: corr, name: `kernel_${i % 7}`, grid: [64, 1, 1], block: [256, 1, 1], registers: 32 });
      }
      // One issuing thread per stream: each thread's calls stay in time order, as recorded ones are.
      w.apiCall({ start: issue, end: issue + 3000, pid, tid: 1000 + s, name: i % 5 === 4 ? 'cudaMemcpyAsync' : 'cudaLaunchKernel', domain: 1, cbid: 0, correlation: corr, returnValue: 0 });
      corr++;
      t += dur + Math.floor(rnd() * 50_000);
    }
  }
  w.finish({ command: `generated: ${ops} operations over ${streams} streams` });
}
// Run as a script (not when bench/run-bench.ts imports generate()).
if (process.argv[1] && path.resolve(process.argv[1]) === import.meta.filename) {
  const { values } = parseArgs({ options: { output: { type: 'string', short: 'o' }, ops: { type: 'string', default: '10000000' }, streams: { type: 'string', default: '64' } } });
  if (!values.output) {
    process.stderr.write('usage: node bench/generate-recording.ts -o FILE [--ops N] [--streams S]\n');
    process.exit(2);
  }
  generate(values.output, Number(values.ops), Number(values.streams));
}
