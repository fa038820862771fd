// Where the commands write (issue 27, failures 2, 3, 7 and 8): every
// command that writes a file goes through profiler/store/output-file.ts.
// Run as a user runs them, as child processes: an existing output is
// replaced only with --force, an input (or a link to one) never; two
// writers racing to one new output cannot both succeed; what killed
// writers leave is cleaned up by the next, a running writer's left alone;
// a recording whose writer was killed inside a transaction still opens.
import { spawn, spawnSync } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { repoRoot } from '../../profiler/native/paths.ts';
import { openRecording, readMeta } from '../../profiler/store/database.ts';
import { temporaryName } from '../../profiler/store/output-file.ts';
import { syntheticStream, tempDir } from '../helpers/native.ts';

const cli = path.join(repoRoot, 'profiler/cli/streamscope.ts');
const fixtures = path.join(repoRoot, 'test/fixtures');

let dir: string;
/** Inputs, one per command: a recording (export, merge), a trace (import), a record stream (ingest). */
let rec: string;
let trace: string;
let stream: string;
beforeAll(() => {
  dir = tempDir('output-files');
  rec = path.join(dir, 'rec.sqlite');
  fs.copyFileSync(path.join(fixtures, 'recordings/matmul-serial.sqlite'), rec);
  stream = path.join(dir, 's.ssr');
  fs.copyFileSync(path.join(fixtures, 'streams/torch_streams-h100.ssr'), stream);
  trace = path.join(dir, 'trace.json');
  expect(run(['export', rec, '-o', trace]).code).toBe(0);
});
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

interface Ran {
  code: number | null;
  stderr: string;
}

function run(args: string[]): Ran {
  const r = spawnSync(process.execPath, [cli, ...args], { encoding: 'utf8', cwd: dir });
  return { code: r.status, stderr: r.stderr };
}

function runConcurrently(args: string[]): Promise<Ran> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [cli, ...args], { cwd: dir, stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.on('close', (code) => resolve({ code, stderr }));
  });
}

const hash = (f: string) => crypto.createHash('sha256').update(fs.readFileSync(f)).digest('hex');

/** Temporary files of the output module (and SQLite's beside them) in `d`. */
const temporaries = (d = dir) => fs.readdirSync(d).filter((f) => /\.writing(-journal|-wal|-shm)?$/.test(f));

/** Refused before writing: exit 2 and exactly `line` on stderr. */
function refused(r: Ran, line: string): void {
  expect(r.stderr).toBe(`streamscope: ${line}\n`);
  expect(r.code).toBe(2);
}

const KEEPS_INPUTS = 'write to another file (--force never replaces an input)';

describe('an output that is an input, exists, or is a link: refused in one line, nothing touched (issue 27, 2)', () => {
  it('export -o its own recording, or a symbolic or hard link to it: refused, --force or not; the recording as it was', () => {
    const before = hash(rec);
    refused(run(['export', rec, '-o', rec]), `${rec}: is also an input: ${KEEPS_INPUTS}`);
    refused(run(['export', rec, '-o', rec, '--force']), `${rec}: is also an input: ${KEEPS_INPUTS}`);
    const symlink = path.join(dir, 'rec-link.json');
    fs.symlinkSync(rec, symlink);
    refused(run(['export', rec, '-o', symlink, '--force']), `${symlink}: is the same file as the input ${rec}: ${KEEPS_INPUTS}`);
    const hardlink = path.join(dir, 'rec-hard.json');
    fs.linkSync(rec, hardlink);
    refused(run(['export', rec, '-o', hardlink, '--force']), `${hardlink}: is the same file as the input ${rec}: ${KEEPS_INPUTS}`);
    // The same path written another way is the same file.
    const spelled = path.join(dir, '.', 'sub-that-is-not', '..', 'rec.sqlite');
    refused(run(['export', rec, '-o', spelled, '-f']), `${spelled}: is also an input: ${KEEPS_INPUTS}`);
    expect(hash(rec)).toBe(before);
    expect(fs.readlinkSync(symlink)).toBe(rec);
    expect(temporaries()).toEqual([]);
    fs.rmSync(symlink);
    fs.rmSync(hardlink);
  });

  it('export over an existing file or a symbolic link, without --force: refused, both as they were; with it, the file (or the link itself) replaced', () => {
    const existing = path.join(dir, 'existing.json');
    fs.writeFileSync(existing, 'keep me');
    refused(run(['export', rec, '-o', existing]), `${existing}: already exists (use --force to overwrite)`);
    expect(fs.readFileSync(existing, 'utf8')).toBe('keep me');

    const target = path.join(dir, 'target.txt');
    fs.writeFileSync(target, 'the link points here');
    const link = path.join(dir, 'link.json');
    fs.symlinkSync(target, link);
    refused(run(['export', rec, '-o', link]), `${link}: already exists (use --force to overwrite)`);
    const dangling = path.join(dir, 'dangling.json');
    fs.symlinkSync(path.join(dir, 'nothing-here'), dangling);
    refused(run(['export', rec, '-o', dangling]), `${dangling}: already exists (use --force to overwrite)`);
    expect(fs.readlinkSync(dangling)).toBe(path.join(dir, 'nothing-here'));
    expect(fs.existsSync(path.join(dir, 'nothing-here'))).toBe(false);

    expect(run(['export', rec, '-o', existing, '--force']).code).toBe(0);
    expect(JSON.parse(fs.readFileSync(existing, 'utf8'))).toHaveProperty('traceEvents');
    // --force replaces the link with the trace; what it pointed to is not written through it.
    expect(run(['export', rec, '-o', link, '--force']).code).toBe(0);
    expect(fs.lstatSync(link).isSymbolicLink()).toBe(false);
    expect(fs.readFileSync(target, 'utf8')).toBe('the link points here');
    expect(temporaries()).toEqual([]);
  });

  it('ingest --force -o s.ssr s.ssr, or -o a stream of the directory given: refused; the streams as they were', () => {
    const before = hash(stream);
    refused(run(['ingest', '--force', '-o', stream, stream]), `${stream}: is also an input: ${KEEPS_INPUTS}`);
    const streams = path.join(dir, 'streams');
    fs.mkdirSync(streams);
    const inside = path.join(streams, '4242.ssr');
    fs.copyFileSync(stream, inside);
    refused(run(['ingest', '--force', '-o', inside, streams]), `${inside}: is also an input: ${KEEPS_INPUTS}`);
    refused(run(['ingest', '--force', '-o', streams, streams]), `${streams}: is also an input: ${KEEPS_INPUTS}`);
    expect(hash(stream)).toBe(before);
    expect(hash(inside)).toBe(before);
    expect(temporaries()).toEqual([]);
    expect(temporaries(streams)).toEqual([]);
  });

  it('import and merge: a hard link to an input is refused even with --force; a directory is no output', () => {
    const traceLink = path.join(dir, 'trace-hard.sqlite');
    fs.linkSync(trace, traceLink);
    const before = hash(trace);
    refused(run(['import', trace, '-o', traceLink, '--force']), `${traceLink}: is the same file as the input ${trace}: ${KEEPS_INPUTS}`);
    expect(hash(trace)).toBe(before);
    const recLink = path.join(dir, 'rec-hard.sqlite');
    fs.linkSync(rec, recLink);
    refused(run(['merge', rec, '-o', recLink, '--force']), `${recLink}: is the same file as the input ${rec}: ${KEEPS_INPUTS}`);
    const folder = path.join(dir, 'a-folder');
    fs.mkdirSync(folder);
    refused(run(['merge', rec, '-o', folder, '--force']), `${folder}: is a directory: give the name of the file to write`);
    expect(temporaries()).toEqual([]);
  });

  it('ingest refused says only why: nothing of what was stored, since nothing was (issue 27, 8)', () => {
    const existing = path.join(dir, 'ingested-before.sqlite');
    expect(run(['ingest', '-o', existing, stream]).code).toBe(0);
    const before = hash(existing);
    refused(run(['ingest', '-o', existing, stream]), `${existing}: already exists (use --force to overwrite)`);
    expect(hash(existing)).toBe(before);
  });
});

describe('two writers racing to one new output, neither with --force: one writes it, the other is told (issue 27, 3)', () => {
  // Started together, both find no output; each writes its own temporary and only one link(2) can publish it.
  it.each([
    ['import', () => ['import', trace, '-o']],
    ['ingest', () => ['ingest', stream, '-o']],
  ])('%s', async (_, args) => {
    const out = path.join(dir, `raced-${_}.sqlite`);
    const [a, b] = await Promise.all([runConcurrently([...args(), out]), runConcurrently([...args(), out])]);
    const results = [a, b].sort((x, y) => (x.code ?? -1) - (y.code ?? -1));
    expect(results.map((r) => r.code)).toEqual([0, 2]);
    expect(results[1]!.stderr).toMatch(
      new RegExp(`^streamscope: ${out}: already exists(: another command wrote it meanwhile)? \\(use --force to overwrite\\)\\n$`),
    );
    const db = openRecording(out, { readonly: true });
    expect(readMeta(db).get('complete')).toBe('1');
    db.close();
    expect(temporaries()).toEqual([]);
  });
});

describe('what killed writers leave (issue 27, 7)', () => {
  let live: ReturnType<typeof spawn>;
  afterAll(() => live?.kill());

  it('temporaries of processes that are gone are removed by the next writer of that output; a running process’s, another host’s, are kept', () => {
    const out = path.join(dir, 'swept.json');
    const dead = spawnSync('true').pid!;
    live = spawn('sleep', ['60']);
    const gone = [
      temporaryName(out, dead),
      `${temporaryName(out, dead, 3)}-journal`,
      // The names each command used before it wrote through output-file.ts.
      path.join(dir, `.swept.json.importing-${dead}`),
      path.join(dir, `.swept.json.merging-${dead}-journal`),
      path.join(dir, `.swept.json.exporting-${dead}`),
      path.join(dir, `swept.json.${dead}.new`),
      path.join(dir, `swept.json.${dead}.new-journal`),
    ];
    const kept = [
      temporaryName(out, live.pid!),
      path.join(dir, `.swept.json.importing-${live.pid}`),
      temporaryName(out, dead, 1, 'another-host'),
      // Another output's, and names that only look alike.
      path.join(dir, `.other.json.exporting-${dead}`),
      path.join(dir, `.swept.json.importing-${dead}.txt`),
      path.join(dir, `swept.json.${dead}.new.backup`),
    ];
    for (const f of [...gone, ...kept]) fs.writeFileSync(f, 'left behind');
    try {
      expect(run(['export', rec, '-o', out]).code).toBe(0);
      expect(gone.filter((f) => fs.existsSync(f))).toEqual([]);
      expect(kept.filter((f) => !fs.existsSync(f))).toEqual([]);
    } finally {
      for (const f of [...gone, ...kept]) fs.rmSync(f, { force: true });
    }
  });

  it('an ingest killed inside its write leaves the output as it was; the next ingest writes it, and removes what the killed one left', async () => {
    const here = path.join(dir, 'killed');
    fs.mkdirSync(here);
    const { stream: big } = syntheticStream(here, 'big', ['--bench-launches', '200000']);
    const out = path.join(here, 'killed.sqlite');
    expect(run(['ingest', '-o', out, stream]).code).toBe(0);
    const before = hash(out);
    const child = spawn(process.execPath, [cli, 'ingest', '--force', '-o', out, big], { cwd: here, stdio: 'ignore' });
    const exited = new Promise((resolve) => child.on('exit', resolve));
    // Killed while its transaction is open: its temporary's rollback journal is there.
    const journals = () => fs.readdirSync(here).filter((f) => f.endsWith('-journal'));
    const deadline = Date.now() + 30_000;
    while (journals().length === 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 2));
    child.kill('SIGKILL');
    await exited;
    expect(journals()).toEqual([`${path.basename(temporaryName(out, child.pid!))}-journal`]);
    expect(hash(out)).toBe(before);
    const report = run(['report', out]);
    expect(report.code, report.stderr).toBe(0);

    expect(run(['ingest', '--force', '-o', out, big]).code).toBe(0);
    expect(temporaries(here)).toEqual([]);
    const db = openRecording(out, { readonly: true });
    expect(readMeta(db).get('complete')).toBe('1');
    db.close();
  });

  it('a recording whose writer was killed inside a transaction (a rollback journal left) opens as of its last commit', () => {
    const file = path.join(dir, 'hot-journal.sqlite');
    fs.copyFileSync(rec, file);
    const kernels = (db: ReturnType<typeof openRecording>) => db.prepare('SELECT count(*) FROM kernels').pluck().get() as number;
    const db0 = openRecording(file, { readonly: true });
    const committed = kernels(db0);
    db0.close();
    expect(committed).toBeGreaterThan(0);
    // A writer that deletes every kernel, spills its pages to the file, and dies by SIGKILL before it commits.
    const writer = `
      const Database = (await import(${JSON.stringify(path.join(repoRoot, 'node_modules/better-sqlite3/lib/index.js'))})).default;
      const db = new Database(${JSON.stringify(file)});
      db.pragma('cache_size = 1');
      db.exec(\`BEGIN; DELETE FROM kernels; INSERT INTO meta (key, value)
        WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 500) SELECT 'pad' || i, hex(randomblob(4000)) FROM n\`);
      process.kill(process.pid, 'SIGKILL');`;
    spawnSync(process.execPath, ['--input-type=module', '-e', writer]);
    expect(fs.statSync(`${file}-journal`).size).toBeGreaterThan(0);
    const r = run(['report', file, '--json']);
    expect(r.code, r.stderr).toBe(0);
    const db = openRecording(file, { readonly: true });
    expect(kernels(db)).toBe(committed);
    db.close();
    expect(fs.existsSync(`${file}-journal`)).toBe(false);
  });
});
