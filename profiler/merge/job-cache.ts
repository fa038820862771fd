// Several recordings opened as one job (issue 13, part 2): the app (several
// files picked in File ▸ Open… or dropped together, `streamscope open A B
// C`) and browser mode (`streamscope serve A B C`) open the recordings of
// one distributed job's ranks as one recording, merged by mergeRecordings
// into a cache directory, never beside the user's files, which are only
// read. The merged file is named from the inputs' paths, sizes and
// modification times, so opening the same set again reuses it; a changed
// input is a new set.
//
// Which files form a job is decided from the files themselves: each holds
// processes with ranks (the launcher variables the collector recorded),
// no rank appears in two files, and they agree on the job's size. Two runs
// of one program (before.sqlite, after.sqlite, say, opened to compare them)
// hold the same ranks, or none, and open one by one as before. `--job`
// (OpenMode 'job') merges whatever was given; `--separate` merges nothing.
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import type { ClockMethod as ShownClockMethod } from '../contract/job.ts';
import { VERSION } from '../contract/version.ts';
import { openRecording, type Db } from '../store/database.ts';
import { latestSchemaVersion } from '../store/migrations/index.ts';
import { readProcesses } from '../store/ranks.ts';
import type { ClockMethod } from './align.ts';
import { mergeRecordings, type MergeResult } from './merge.ts';
import { cacheDir } from '../base/cache-dir.ts';

// The views name the clock methods merge writes (contract/job.ts): the two lists must be one.
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
const clockMethodsAgree: Same<ClockMethod, ShownClockMethod> = true;
void clockMethodsAgree;

/** auto: the recordings of one job's ranks are merged, others open alone; job: everything given is merged; separate: nothing is. */
export type OpenMode = 'auto' | 'job' | 'separate';

/** Merged jobs kept in a cache directory: the most recently opened ones. */
export const JOB_CACHE_KEEP = 8;

/** A merge's file in the cache: `<first input's name>-job-of-<n>-<key>.sqlite`. */
const JOB_FILE = /-job-of-\d+-[0-9a-f]{16}\.sqlite$/;

export interface OpenPlan {
  /** The files to merge as one job, lowest rank first (the first one's clock is the reference); empty: no job. */
  job: string[];
  /** Files opened one by one, as given. */
  separate: string[];
  /** Files that cannot be read as recordings, with the store's error (a RecordingFileError naming the file). */
  failed: { file: string; error: unknown }[];
}

/** What planning needs of a file: its processes' ranks, and the job sizes their launchers gave. */
export interface Inspected {
  file: string;
  ranks: number[];
  worldSizes: Set<number>;
}

/** Inspected of a recording open as `db` (a reader that opened it for more: query/open-read.ts). */
export function inspectOpen(file: string, db: Db): Inspected {
  const processes = readProcesses(db);
  return {
    file,
    ranks: processes.flatMap((p) => (p.rank === null ? [] : [p.rank])),
    worldSizes: new Set(processes.flatMap((p) => (p.worldSize === null ? [] : [p.worldSize]))),
  };
}

/** A file's ranks, opened as every reader opens a recording (the store's checks). */
function inspect(file: string): Inspected {
  const db = openRecording(file, { readonly: true });
  try {
    return inspectOpen(file, db);
  } finally {
    db.close();
  }
}

/** Whether `list` holds the ranks of one job: ranks in each, none twice, one job size (where launchers gave one). */
function oneJob(list: Inspected[]): boolean {
  if (list.length < 2 || list.some((f) => f.ranks.length === 0)) return false;
  const seen = new Set<number>();
  for (const f of list) {
    for (const r of f.ranks) {
      if (seen.has(r)) return false;
      seen.add(r);
    }
  }
  const sizes = new Set(list.flatMap((f) => [...f.worldSizes]));
  return sizes.size <= 1;
}

/**
 * Which of `files` open as one job and which alone (module header: the
 * rule). Each file is opened once to read its ranks; one that is not a
 * readable recording is in `failed` and takes no part. `inspected`: files
 * already read (by absolute path), as query/open-read.ts reads many on
 * worker threads; the others are read here.
 */
export function planOpen(files: readonly string[], mode: OpenMode = 'auto', inspected?: ReadonlyMap<string, Inspected>): OpenPlan {
  const unique = [...new Set(files.map((f) => path.resolve(f)))];
  const failed: OpenPlan['failed'] = [];
  const readable: Inspected[] = [];
  for (const file of unique) {
    try {
      readable.push(inspected?.get(file) ?? inspect(file));
    } catch (error) {
      failed.push({ file, error });
    }
  }
  let members: Inspected[] = [];
  if (mode === 'job' && readable.length >= 2) members = readable;
  else if (mode === 'auto') {
    const ranked = readable.filter((f) => f.ranks.length > 0);
    if (oneJob(ranked)) members = ranked;
  }
  const lowest = (f: Inspected) => f.ranks.reduce((m, r) => Math.min(m, r), Number.POSITIVE_INFINITY);
  const job = [...members].sort((a, b) => lowest(a) - lowest(b) || unique.indexOf(a.file) - unique.indexOf(b.file)).map((f) => f.file);
  return { job, separate: readable.map((f) => f.file).filter((f) => !job.includes(f)), failed };
}

/** Where merged jobs are cached when the caller names no place: $STREAMSCOPE_CACHE_DIR/jobs, else the XDG cache directory's streamscope/jobs. */
export function defaultJobCacheDir(env: NodeJS.ProcessEnv = process.env): string {
  return path.join(cacheDir(env), 'jobs');
}

/**
 * The cached job file of `files` (in merge order) in `cacheDir`. Its name
 * hashes each input's absolute path, size and modification time, and this
 * StreamScope's version and schema (a merge by another version is not
 * taken for one by this): the same unchanged files in the same order give
 * the same name; a file written since gives another.
 */
export function jobCachePath(files: readonly string[], cacheDir: string): string {
  const stats = files.map((f) => {
    const st = fs.statSync(f);
    return [path.resolve(f), st.size, st.mtimeMs];
  });
  const key = crypto
    .createHash('sha256')
    .update(JSON.stringify({ version: VERSION, schema: latestSchemaVersion, files: stats }))
    .digest('hex')
    .slice(0, 16);
  const stem =
    path
      .basename(files[0]!)
      .replace(/\.(sqlite|db)$/i, '')
      .replace(/[^A-Za-z0-9._-]+/g, '_')
      .slice(0, 48) || 'job';
  return path.join(cacheDir, `${stem}-job-of-${files.length}-${key}.sqlite`);
}

export interface CachedJob {
  /** The merged recording. */
  file: string;
  /** Taken from the cache (the same files were opened before): no merge ran. */
  reused: boolean;
  /** The merge's result when one ran. */
  merge: MergeResult | null;
}

/**
 * The merged recording of `files` (in merge order: planOpen's job), from
 * the cache or merged into it now. A file that cannot be merged is a
 * RecordingFileError naming it (merge.ts); nothing is left behind then.
 */
export function cachedJob(files: readonly string[], cacheDir: string): CachedJob {
  fs.mkdirSync(cacheDir, { recursive: true });
  const file = jobCachePath(files, cacheDir);
  if (fs.existsSync(file)) {
    // Opened again: the most recently used, last to go when the cache is pruned.
    const now = new Date();
    fs.utimesSync(file, now, now);
    return { file, reused: true, merge: null };
  }
  // Another process may merge the same set at the same time: each writes its own temporary file and renames it, the last one wins.
  const merge = mergeRecordings(files, file, { overwrite: true });
  pruneJobCache(cacheDir, JOB_CACHE_KEEP, file);
  return { file, reused: false, merge };
}

/**
 * Keeps the `keep` most recently used job files of the cache (and `keepFile`),
 * deleting the others, and merges' temporary files a crash left over a day
 * ago. Only files this module named are touched. A job still open in some
 * session stays readable there (an unlinked file lives on while open).
 */
export function pruneJobCache(cacheDir: string, keep = JOB_CACHE_KEEP, keepFile?: string): void {
  let names: string[];
  try {
    names = fs.readdirSync(cacheDir);
  } catch {
    return;
  }
  const jobs: { file: string; mtimeMs: number }[] = [];
  const dayAgo = Date.now() - 24 * 3600 * 1000;
  for (const name of names) {
    const file = path.join(cacheDir, name);
    const st = fs.statSync(file, { throwIfNoEntry: false });
    if (!st?.isFile()) continue;
    if (JOB_FILE.test(name)) jobs.push({ file, mtimeMs: st.mtimeMs });
    else if (/^\..*-job-of-\d+-[0-9a-f]{16}\.sqlite\.merging-\d+(-journal)?$/.test(name) && st.mtimeMs < dayAgo) fs.rmSync(file, { force: true });
  }
  jobs.sort((a, b) => b.mtimeMs - a.mtimeMs);
  for (const j of jobs.slice(keep)) if (j.file !== keepFile) fs.rmSync(j.file, { force: true });
}
