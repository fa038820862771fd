// `streamscope import A.json B.json …` (issue 29): every trace into its own
// recording in one command, on worker threads, as a user runs it (a child
// process, real traces, real SQLite). The recordings are those of one import
// per trace, table by table; a bad trace among good ones is said with its
// problem while the others import; an existing recording is kept; the
// bundled CLI finds its import worker.
import { execFileSync, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { recordingFor, tracesOf } from '../../profiler/import/import-many.ts';
import { addonPath } from '../../profiler/native/addon.ts';
import { openRecording } from '../../profiler/store/database.ts';
import { tempDir } from '../helpers/native.ts';

const root = path.resolve(import.meta.dirname, '../..');
const cli = path.join(root, 'profiler/cli/streamscope.ts');
// Real traces: the two ranks of a DDP job on an H200, and a single-process PyTorch trace on an H100.
const TRACES = ['kineto/job/slow-rank0.json', 'kineto/job/slow-rank1.json', 'kineto/torch_streams_h100.json'].map((f) => path.join(root, 'test/fixtures', f));

function run(args: string[], entry = cli, env: NodeJS.ProcessEnv = {}) {
  const r = spawnSync(process.execPath, [entry, ...args], { encoding: 'utf8', env: { ...process.env, ...env } });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

/** Every table's rows, in rowid order, as text: two recordings hold the same when these are equal. */
function contents(file: string): Record<string, string> {
  const db = openRecording(file, { readonly: true });
  try {
    const tables = db.prepare("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name").pluck().all() as string[];
    return Object.fromEntries(
      tables.map((t) => [
        t,
        createHash('sha256')
          .update(JSON.stringify(db.prepare(`SELECT * FROM "${t}"`).raw().all(), (_, v: unknown) => (typeof v === 'bigint' ? v.toString() : v)))
          .digest('hex'),
      ]),
    );
  } finally {
    db.close();
  }
}

let dir: string;
let traces: string[];
beforeAll(() => {
  dir = tempDir('import-many');
  fs.mkdirSync(path.join(dir, 'traces'));
  traces = TRACES.map((t) => {
    const copy = path.join(dir, 'traces', path.basename(t));
    fs.copyFileSync(t, copy);
    return copy;
  });
});
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

describe('streamscope import of several traces in one command', () => {
  it('each beside its trace, on worker threads: the recordings one import per trace writes, table by table; then a job', () => {
    const r = run(['import', ...traces, '--workers', '2']);
    expect(r.stderr).toMatch(/imported 3 traces in [\d.]+ s \(2 worker threads\)\n$/);
    expect(r.code).toBe(0);
    for (const trace of traces) {
      const output = trace.replace(/\.json$/, '.sqlite');
      // A line per trace, naming it and its recording.
      expect(r.stderr).toMatch(new RegExp(`^streamscope: \\[\\d/3\\] ${trace}: kineto: \\d+ kernels, .* → ${output} \\([\\d.]+ s\\)$`, 'm'));
      const single = path.join(dir, `single-${path.basename(output)}`);
      const one = run(['import', trace, '-o', single]);
      expect(one.code, one.stderr).toBe(0);
      const [many, alone] = [contents(output), contents(single)];
      expect(Object.keys(many).length).toBeGreaterThan(10);
      expect(many).toEqual(alone);
    }
    // The job's two ranks, imported together, report as one job (from their summaries) and merge.
    const ranks = traces.slice(0, 2).map((t) => t.replace(/\.json$/, '.sqlite'));
    const report = run(['report', ...ranks]);
    expect(report.code, report.stderr).toBe(0);
    expect(report.stdout).toMatch(/^job {7}2 ranks \(processes with GPU work\) of 2 recordings, from their summaries/m);
    expect(report.stdout).toMatch(/straggler: rank 1/);
    const merged = run(['merge', ...ranks, '-o', path.join(dir, 'job.sqlite')]);
    expect(merged.code, merged.stderr).toBe(0);
    expect(merged.stderr).toMatch(/clock corrected .* by its NCCL collectives/);
  }, 120_000);

  it('a folder, into -o DIR with no worker threads: the same recordings; run again, each existing one kept (no --force)', () => {
    const out = path.join(dir, 'out');
    const r = run(['import', path.join(dir, 'traces'), '-o', out, '--workers', '0']);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toMatch(/imported 3 traces in [\d.]+ s \(no worker threads\)\n$/);
    for (const trace of traces) expect(contents(recordingFor(trace, out))).toEqual(contents(trace.replace(/\.json$/, '.sqlite')));

    const before = fs.readFileSync(recordingFor(traces[0]!, out));
    const again = run(['import', ...traces, '-o', out, '--workers', '2']);
    expect(again.code).toBe(1);
    for (const trace of traces) expect(again.stderr).toContain(`failed: ${recordingFor(trace, out)}: already exists (use --force to overwrite)\n`);
    expect(again.stderr).toMatch(/imported 0 of 3 traces in [\d.]+ s \(2 worker threads\); 3 failed:\n/);
    expect(fs.readFileSync(recordingFor(traces[0]!, out)).equals(before)).toBe(true);
    const forced = run(['import', ...traces, '-o', out, '--force']);
    expect(forced.code, forced.stderr).toBe(0);
  }, 120_000);

  it('bad traces among good ones: each said with its problem, the good ones imported, exit 1 with the list', () => {
    const bad = path.join(dir, 'bad');
    fs.mkdirSync(bad);
    const truncated = path.join(bad, 'truncated.json');
    fs.writeFileSync(truncated, fs.readFileSync(traces[0]!).subarray(0, 100_000));
    const notATrace = path.join(bad, 'notes.txt');
    fs.writeFileSync(notATrace, 'not a trace\n');
    const missing = path.join(bad, 'missing.json');
    const good = path.join(bad, 'good.json');
    fs.copyFileSync(traces[1]!, good);
    const r = run(['import', truncated, notATrace, good, missing, '--workers', '2']);
    expect(r.code).toBe(1);
    const problems = [`${truncated}: truncated JSON`, `${notATrace}: not a trace StreamScope can import`, `${missing}: no such file`];
    for (const p of problems) {
      expect(r.stderr).toMatch(new RegExp(`^streamscope: \\[\\d/4\\] failed: ${p}`, 'm'));
      expect(r.stderr).toMatch(new RegExp(`^  ${p}`, 'm'));
    }
    expect(r.stderr).toMatch(/imported 1 of 4 traces in [\d.]+ s \(2 worker threads\); 3 failed:\n/);
    expect(fs.readdirSync(bad).sort()).toEqual(['good.json', 'good.sqlite', 'notes.txt', 'truncated.json']);
    // The same rows as the trace it is a copy of; meta names the file it was imported from.
    const { meta: _meta, ...rows } = contents(path.join(bad, 'good.sqlite'));
    const { meta: _same, ...expected } = contents(traces[1]!.replace(/\.json$/, '.sqlite'));
    expect(rows).toEqual(expected);
  }, 120_000);

  it('two traces that would write one recording: the second refused, the first imported; an empty folder refused', () => {
    const twice = path.join(dir, 'twice');
    const r = run(['import', traces[0]!, traces[0]!, '-o', twice]);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(`failed: ${traces[0]}: its recording ${recordingFor(traces[0]!, twice)} is also ${traces[0]}'s`);
    expect(fs.readdirSync(twice)).toEqual(['slow-rank0.sqlite']);
    const empty = path.join(dir, 'empty');
    fs.mkdirSync(empty);
    expect(run(['import', empty])).toMatchObject({ code: 2, stderr: `streamscope: ${empty}: no traces in this folder (*.json, *.json.gz)\n` });
    expect(() => tracesOf([empty])).toThrow(/no traces in this folder/);
  }, 60_000);

  it('one trace is imported as before: -o required, the file it names', () => {
    const r = run(['import', traces[0]!]);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/^streamscope import: missing -o OUT\.sqlite\n/);
  });

  it("the bundled CLI imports several on its own import worker (app/vite.config.ts's entry)", () => {
    // Built outside the source tree, as test/app/query-worker.test.ts builds it.
    const outDir = path.join(root, 'node_modules/.cache/streamscope-test/import-build');
    execFileSync(
      process.execPath,
      [path.join(root, 'node_modules/vite/bin/vite.js'), 'build', '-c', 'app/vite.config.ts', '--outDir', outDir, '--emptyOutDir'],
      {
        cwd: root,
        stdio: 'pipe',
      },
    );
    expect(fs.existsSync(path.join(outDir, 'import-worker.cjs'))).toBe(true);
    const out = path.join(dir, 'bundled');
    const r = run(['import', ...traces.slice(0, 2), '-o', out, '--workers', '2'], path.join(outDir, 'streamscope-cli.cjs'), {
      STREAMSCOPE_ADDON_PATH: addonPath(),
    });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toMatch(/imported 2 traces in [\d.]+ s \(2 worker threads\)\n$/);
    for (const trace of traces.slice(0, 2)) expect(contents(recordingFor(trace, out))).toEqual(contents(trace.replace(/\.json$/, '.sqlite')));
  }, 120_000);
});
