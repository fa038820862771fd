// `streamscope merge A.sqlite B.sqlite … -o job.sqlite [--force]
// [--align collectives|wall-clock] [--json]`: many recordings (one per rank
// or node) as one job. Prints, per input, the shift its times got and how
// well its collectives line up after it, so the alignment can be judged.
// Exit 0 when merged, 2 for bad usage or a file that cannot be merged
// (nothing is written then).
import path from 'node:path';
import { alignmentLine } from '../report/clocks.ts';
import { mergeRecordings, type AlignMode, type MergeResult } from '../merge/merge.ts';
import { RecordingFileError } from '../store/recording-error.ts';
import { COMMANDS } from './commands.ts';
import { parseCommand } from './usage.ts';

/** The command line (declared in commands.ts; -o and an input required, --align's two values); a UsageError where it does not fit. */
export function parseMergeArgs(args: string[]): { inputs: string[]; output: string; force: boolean; align: AlignMode; json: boolean } {
  const { values, operands } = parseCommand(COMMANDS.merge, args);
  return { inputs: operands, output: values.output!, force: values.force ?? false, align: values.align ?? 'collectives', json: values.json ?? false };
}

export function formatMerge(r: MergeResult): string {
  const ops = (r.rows.kernels ?? 0) + (r.rows.memcpys ?? 0) + (r.rows.memsets ?? 0);
  const count = (n: number, one: string, many: string) => `${n.toLocaleString('en-US')} ${n === 1 ? one : many}`;
  const lines = [
    `streamscope: merged ${count(r.sources.length, 'recording', 'recordings')} (${count(r.processes, 'process', 'processes')}, ${count(r.devices, 'GPU', 'GPUs')}, ` +
      `${count(ops, 'GPU operation', 'GPU operations')}) → ${r.output} in ${r.seconds.toFixed(1)} s`,
    ...r.sources.map((s) => `  ${alignmentLine(s)}`),
    ...r.notes.map((n) => `streamscope: note: ${n}`),
  ];
  return lines.join('\n') + '\n';
}

/** The command: exit code, lines on stderr (JSON on stdout with --json). */
export function cmdMerge(args: string[]): number {
  const parsed = parseMergeArgs(args);
  let result: MergeResult;
  try {
    result = mergeRecordings(parsed.inputs, parsed.output, { overwrite: parsed.force, align: parsed.align });
  } catch (err) {
    if (err instanceof RecordingFileError) {
      process.stderr.write(`streamscope: ${err.message}\n`);
      return 2;
    }
    throw err;
  }
  if (parsed.json) {
    process.stdout.write(JSON.stringify({ mergeVersion: 1, ...result, output: path.resolve(result.output) }, null, 2) + '\n');
  }
  process.stderr.write(formatMerge(result));
  return 0;
}
