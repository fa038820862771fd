// Several recordings opened as one job (profiler/merge/job-cache.ts, and
// SessionRegistry.openFiles over it): which files form a job, the cache's
// names (the same unchanged files: the same merged file; a file written
// since: another), a merge run once and reused, the user's files never
// written to or beside, the cache pruned, and every refusal named. The
// per-rank recordings are CONSTRUCTED through RecordingWriter
// (test/helpers/rank-files.ts), each with its rank and host; the real H100
// fixtures stand for recordings of no job.
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cachedJob, defaultJobCacheDir, JOB_CACHE_KEEP, jobCachePath, planOpen, pruneJobCache } from '../../profiler/merge/job-cache.ts';
import { SessionRegistry } from '../../profiler/query/session.ts';
import { RecordingFileError } from '../../profiler/store/recording-error.ts';
import { tempDir } from '../helpers/native.ts';
import { writeRankFiles } from '../helpers/rank-files.ts';

const fixture = (name: string) => path.resolve(import.meta.dirname, `../fixtures/recordings/${name}.sqlite`);
let dir: string;
let inputs: string;
let ranks: string[];
beforeAll(() => {
  dir = tempDir('job-cache');
  inputs = path.join(dir, 'inputs');
  fs.mkdirSync(inputs);
  ranks = writeRankFiles(inputs, 'job', 4);
});
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

const digest = (f: string) => crypto.createHash('sha256').update(fs.readFileSync(f)).digest('hex');

/** A copy of a rank's file that says it is rank `rank` of `world` (its recording is the same one: merge refuses the pair). */
function relabelled(src: string, name: string, rank: number, world = 4): string {
  const file = path.join(inputs, name);
  fs.copyFileSync(src, file);
  const db = new Database(file);
  db.prepare("UPDATE process_env SET value = ? WHERE name = 'RANK'").run(String(rank));
  db.prepare("UPDATE process_env SET value = ? WHERE name = 'WORLD_SIZE'").run(String(world));
  db.prepare('UPDATE processes SET rank = ?, world_size = ?').run(rank, world);
  db.close();
  return file;
}

describe('which files open as one job', () => {
  it("one job's ranks, given in any order: a job in rank order (rank 0's clock is the reference)", () => {
    const plan = planOpen([ranks[2]!, ranks[0]!, ranks[3]!, ranks[1]!]);
    expect(plan).toEqual({ job: ranks, separate: [], failed: [] });
  });

  it('recordings of no job (no ranks) open one by one, as before: two runs to compare', () => {
    const files = [fixture('normalise-concurrent'), fixture('normalise-default-stream')];
    expect(planOpen(files)).toEqual({ job: [], separate: files, failed: [] });
  });

  it('the same rank twice (two runs of one job) is no job: each opens alone', () => {
    const rerun = relabelled(ranks[1]!, 'rerun-rank0.sqlite', 0);
    expect(planOpen([ranks[0]!, ranks[1]!, rerun])).toEqual({ job: [], separate: [ranks[0]!, ranks[1]!, rerun], failed: [] });
  });

  it('ranks of jobs of different sizes are no job', () => {
    const other = relabelled(ranks[1]!, 'other-size.sqlite', 1, 8);
    expect(planOpen([ranks[0]!, other]).job).toEqual([]);
  });

  it("a job's ranks beside a recording of no job: the ranks merged, the other alone; a single file is never a job", () => {
    const lone = fixture('normalise-concurrent');
    expect(planOpen([lone, ranks[1]!, ranks[0]!])).toEqual({ job: [ranks[0], ranks[1]], separate: [lone], failed: [] });
    expect(planOpen([ranks[0]!])).toEqual({ job: [], separate: [ranks[0]], failed: [] });
  });

  it('a file that is not a recording takes no part, with the error naming it; the same path twice counts once', () => {
    const bad = path.join(inputs, 'notes.sqlite');
    fs.writeFileSync(bad, 'not a database at all');
    const plan = planOpen([ranks[0]!, bad, ranks[1]!, path.join(inputs, '.', path.basename(ranks[0]!))]);
    expect(plan.job).toEqual([ranks[0], ranks[1]]);
    expect(plan.failed).toHaveLength(1);
    expect(plan.failed[0]!.file).toBe(bad);
    expect(plan.failed[0]!.error).toBeInstanceOf(RecordingFileError);
    expect((plan.failed[0]!.error as Error).message).toMatch(/notes\.sqlite: not a SQLite database/);
  });

  it('--job merges whatever was given (recordings without ranks too); --separate nothing', () => {
    const files = [fixture('normalise-concurrent'), fixture('transpose-concurrent')];
    expect(planOpen(files, 'job').job).toEqual(files);
    expect(planOpen(ranks, 'separate')).toEqual({ job: [], separate: ranks, failed: [] });
  });
});

describe('the job cache', () => {
  it('is named from the files: the same files the same name, a file written since another', () => {
    const cache = path.join(dir, 'names');
    const a = jobCachePath(ranks, cache);
    expect(path.dirname(a)).toBe(cache);
    expect(path.basename(a)).toMatch(/^job-rank0-job-of-4-[0-9a-f]{16}\.sqlite$/);
    expect(jobCachePath([...ranks], cache)).toBe(a);
    expect(jobCachePath(ranks.slice(0, 3), cache)).not.toBe(a);
    // Touched (a newer modification time): another set.
    const copy = path.join(dir, 'touched.sqlite');
    fs.copyFileSync(ranks[3]!, copy);
    const before = jobCachePath([...ranks.slice(0, 3), copy], cache);
    fs.utimesSync(copy, new Date(), new Date(Date.now() + 5000));
    expect(jobCachePath([...ranks.slice(0, 3), copy], cache)).not.toBe(before);
  });

  it('merges once into the cache and reuses the file; the inputs are not written to, nothing is written beside them', () => {
    const cache = path.join(dir, 'cache');
    const before = new Map(ranks.map((f) => [f, { digest: digest(f), mtime: fs.statSync(f).mtimeMs }]));
    const listing = fs.readdirSync(inputs).sort();
    const first = cachedJob(ranks, cache);
    expect(first.reused).toBe(false);
    expect(first.merge?.sources.map((s) => s.clock)).toEqual(['reference', 'collectives', 'collectives', 'collectives']);
    expect(fs.readdirSync(cache)).toEqual([path.basename(first.file)]);
    const inode = fs.statSync(first.file).ino;
    const again = cachedJob(ranks, cache);
    expect(again).toEqual({ file: first.file, reused: true, merge: null });
    expect(fs.statSync(first.file).ino).toBe(inode);
    for (const [f, b] of before) {
      expect(digest(f), f).toBe(b.digest);
      expect(fs.statSync(f).mtimeMs, f).toBe(b.mtime);
    }
    expect(fs.readdirSync(inputs).sort()).toEqual(listing);
  });

  it(`keeps the ${JOB_CACHE_KEEP} jobs used last, and only files it named`, () => {
    const cache = path.join(dir, 'prune');
    fs.mkdirSync(cache);
    const names = Array.from({ length: JOB_CACHE_KEEP + 3 }, (_, i) => `run-job-of-2-${i.toString(16).padStart(16, '0')}.sqlite`);
    names.forEach((n, i) => {
      fs.writeFileSync(path.join(cache, n), '');
      fs.utimesSync(path.join(cache, n), new Date(), new Date(Date.now() - (names.length - i) * 60_000));
    });
    fs.writeFileSync(path.join(cache, 'notes.txt'), 'the user put this here');
    pruneJobCache(cache, JOB_CACHE_KEEP, path.join(cache, names[0]!));
    expect(fs.readdirSync(cache).sort()).toEqual([names[0]!, ...names.slice(-JOB_CACHE_KEEP), 'notes.txt'].sort());
  });

  it('lives under $STREAMSCOPE_CACHE_DIR, else the XDG cache directory', () => {
    expect(defaultJobCacheDir({ STREAMSCOPE_CACHE_DIR: '/tmp/ss' })).toBe('/tmp/ss/jobs');
    expect(defaultJobCacheDir({ XDG_CACHE_HOME: '/home/u/.xdg' })).toBe('/home/u/.xdg/streamscope/jobs');
    expect(defaultJobCacheDir({ HOME: '/home/u' }).endsWith('/.cache/streamscope/jobs')).toBe(true);
  });
});

describe('SessionRegistry.openFiles', () => {
  it("opens one job's ranks as one recording, others alone, and names every file that failed", async () => {
    const reg = new SessionRegistry();
    const bad = path.join(inputs, 'empty.sqlite');
    fs.writeFileSync(bad, '');
    const lone = fixture('normalise-concurrent');
    const r = await reg.openFiles([ranks[1]!, lone, bad, ranks[0]!], { jobCacheDir: path.join(dir, 'session') });
    expect(r.opened.map((h) => h.path)).toEqual([r.job!.handle.path, lone]);
    expect(r.job).toMatchObject({ inputs: [ranks[0], ranks[1]], reused: false });
    expect(r.failed).toEqual([{ file: bad, code: 'not-a-recording', message: `${bad}: empty file (not a StreamScope recording)` }]);
    // The merged recording's summary says what it is made of.
    const s = reg.get(r.opened[0]!.recordingId).summary();
    expect(s.job?.sources.map((x) => [x.file, x.clock])).toEqual([
      [ranks[0], 'reference'],
      [ranks[1], 'collectives'],
    ]);
    expect(s.processes.map((p) => p.sourceId).sort()).toEqual([1, 2]);
    expect(s.processes.filter((p) => p.originalPid !== null).map((p) => p.originalPid)).toEqual([4242]);
    reg.closeAll();
  });

  it("a job merge refuses: 'not-mergeable', naming the file and why; the files are not opened one by one instead", async () => {
    const reg = new SessionRegistry();
    const twin = relabelled(ranks[0]!, 'twin-rank3.sqlite', 3);
    const cache = path.join(dir, 'refused');
    const r = await reg.openFiles([ranks[0]!, twin], { jobCacheDir: cache });
    expect(r.opened).toEqual([]);
    expect(r.job).toBeNull();
    expect(r.failed).toEqual([
      {
        file: twin,
        code: 'not-mergeable',
        message: expect.stringMatching(/^cannot open 2 recordings as one job: .*twin-rank3\.sqlite: holds the same recording as .*job-rank0\.sqlite/),
      },
    ]);
    expect(fs.readdirSync(cache)).toEqual([]);
    reg.closeAll();
  });
});
