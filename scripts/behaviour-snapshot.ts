// What StreamScope says about every real recording in the repository, written
// down so that a change meant to keep behaviour (a restructuring) can show
// that it did: `report --json` and the text report of each fixture recording
// (the corpus pairs, the runner's scenarios), of each multi-rank job merged
// as `merge` merges it, and of each Kineto trace or Nsight Systems export
// imported as `import` imports it. The JSON carries every finding with its
// what-if. Run it before the change into one folder and after it with
// --check against that folder: it names every output that differs.
//   node scripts/behaviour-snapshot.ts OUT_DIR            write the snapshot
//   node scripts/behaviour-snapshot.ts --check OUT_DIR    compare with it (exit 1 on a difference)
// The inputs the fuzzers keep (test/fixtures/fuzz) are left out: they are
// malformed on purpose, and what is said of them changes as the checks grow.
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { repoRoot } from '../profiler/native/paths.ts';

const run = promisify(execFile);
const cli = path.join(repoRoot, 'profiler/cli/streamscope.ts');
const fixtures = path.join(repoRoot, 'test/fixtures');

const args = process.argv.slice(2);
const check = args[0] === '--check';
const dir = path.resolve(check ? args[1]! : args[0]!);
if (!dir || (check && !fs.existsSync(dir))) {
  process.stderr.write('usage: node scripts/behaviour-snapshot.ts [--check] OUT_DIR\n');
  process.exit(2);
}
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'ss-snapshot-'));

/** Runs the CLI; its exit code, stdout and stderr are the output (a refusal is behaviour too). */
async function cliOutput(argv: string[]): Promise<string> {
  try {
    const { stdout, stderr } = await run(process.execPath, [cli, ...argv], { maxBuffer: 1 << 30, cwd: repoRoot });
    return `exit 0\n${stderr}${stdout}`;
  } catch (e) {
    const err = e as { code?: number; stdout?: string; stderr?: string };
    return `exit ${err.code}\n${err.stderr ?? ''}${err.stdout ?? ''}`;
  }
}

function walk(d: string, ext: string): string[] {
  return fs.readdirSync(d, { withFileTypes: true }).flatMap((e) => {
    const p = path.join(d, e.name);
    if (e.isDirectory()) return e.name === 'fuzz' ? [] : walk(p, ext);
    return e.name.endsWith(ext) ? [p] : [];
  });
}

/** One job per output: its name in the snapshot and how to produce its text. */
const jobs: { name: string; produce: () => Promise<string> }[] = [];
// Paths in the outputs are written relative to the repository, so that two checkouts compare.
const rel = (text: string) => text.replaceAll(repoRoot + '/', '').replaceAll(tmp + '/', '');
/** The reports of `file`, once `made` (the merge or import that writes it) has finished. */
const reportsOf = (name: string, file: string, made: Promise<void> = Promise.resolve()) => {
  jobs.push({ name: `${name}.report.json`, produce: async () => (await made, rel(await cliOutput(['report', '--json', file]))) });
  jobs.push({ name: `${name}.report.txt`, produce: async () => (await made, rel(await cliOutput(['report', file]))) });
};
/** A job that writes a file others read; settled when it has run (it is queued before its readers, so it starts first). */
const producer = (name: string, argv: string[]): Promise<void> => {
  let done!: () => void;
  const made = new Promise<void>((resolve) => (done = resolve));
  jobs.push({ name, produce: () => cliOutput(argv).then(rel).finally(done) });
  return made;
};
// Nsight Systems exports are SQLite files too, but inputs of `import`, not recordings.
const nsys = path.join(fixtures, 'nsys');
const recordings = walk(fixtures, '.sqlite').filter((f) => !f.startsWith(nsys + '/'));
// Multi-rank jobs: the files of one shape (NAME-rankN.sqlite in one folder) merged, then reported.
const shapes = new Map<string, string[]>();
for (const f of recordings) {
  const m = /^(.*)-rank\d+\.sqlite$/.exec(f);
  if (m) shapes.set(m[1]!, [...(shapes.get(m[1]!) ?? []), f].sort());
  else reportsOf(path.relative(fixtures, f), f);
}
for (const [stem, files] of shapes) {
  const name = path.relative(fixtures, stem) + '-job';
  const merged = path.join(tmp, name.replaceAll('/', '_') + '.sqlite');
  reportsOf(name, merged, producer(`${name}.merge.txt`, ['merge', '-o', merged, ...files]));
}
for (const f of [...walk(path.join(fixtures, 'kineto'), '.json'), ...walk(nsys, '.sqlite')]) {
  const name = path.relative(fixtures, f);
  const out = path.join(tmp, name.replaceAll('/', '_') + '.sqlite');
  reportsOf(name, out, producer(`${name}.import.txt`, ['import', '-o', out, f]));
}

// Two at a time, in queue order (a report waits for the merge or import that writes its file).
const outputs = new Map<string, string>();
const pending = [...jobs];
async function worker() {
  for (let job = pending.shift(); job; job = pending.shift()) outputs.set(job.name, await job.produce());
}
await Promise.all([worker(), worker()]);
fs.rmSync(tmp, { recursive: true, force: true });

// Wall-clock figures a report carries (how long a merge or an import took) are the one thing allowed to differ.
const steady = (text: string) => text.replace(/ in \d+(\.\d+)? (s|ms)\b/g, ' in T');
if (!check) {
  fs.mkdirSync(dir, { recursive: true });
  for (const [name, text] of outputs) {
    const p = path.join(dir, name);
    fs.mkdirSync(path.dirname(p), { recursive: true });
    fs.writeFileSync(p, steady(text));
  }
  process.stdout.write(`behaviour-snapshot: ${outputs.size} outputs of ${recordings.length} recordings and their jobs → ${dir}\n`);
} else {
  const differ = [...outputs].filter(([name, text]) => {
    const p = path.join(dir, name);
    return !fs.existsSync(p) || fs.readFileSync(p, 'utf8') !== steady(text);
  });
  for (const [name] of differ) process.stdout.write(`differs: ${name}\n`);
  process.stdout.write(`behaviour-snapshot: ${outputs.size - differ.length} of ${outputs.size} outputs as in ${dir}\n`);
  process.exit(differ.length ? 1 : 0);
}
