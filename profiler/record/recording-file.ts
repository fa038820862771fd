// A recording while it is written: created with its meta and the writer's
// mark (store/writer.ts), its secondary indexes dropped for the load
// (beginRecordingFile); then fed from the record streams while their
// writers run (followStreams), in one transaction per stream file and
// poll, each holding its rows and their zones, so that a reader — the live
// timeline, `serve` on a recording being made — sees the recording as it
// was after some commit, never half of one. finalize.ts ends it.
//
// Readers share the file (rollback journal, SCHEMA.md "Reading a recording
// while it is written"): a commit waits for the readers' transactions under
// way (milliseconds: the views read in short snapshots) and a commit that
// waited past the ingest's busy timeout is undone and tried again at the
// next poll (stream-ingest.ts). The target never waits for any of it: its
// collector writes the stream files, and only this process reads them.
import { beginBulkLoad, createRecording, writeMeta } from '../store/database.ts';
import { beginOutput } from '../store/output-file.ts';
import { RecordingFileError } from '../store/recording-error.ts';
import { markWriting } from '../store/writer.ts';
import type { DirectoryProgress, StreamDirectoryIngest } from './stream-ingest.ts';

/**
 * Polls apart: with the collector's 500 ms flushes, work reaches the file
 * at most 600 ms after the GPU did it (a reader polling every 250 ms shows
 * it within 0.9 s). A poll that finds nothing new costs a directory listing
 * and an empty transaction per stream.
 */
export const POLL_MS = 100;
/** What `onProgress` is told at most this often (`record --progress json`'s lines: every 250 ms). */
export const PROGRESS_MS = 250;

/**
 * Creates `output` (an existing file only with `overwrite`) holding `meta`
 * and the writer's mark, with its secondary indexes dropped for the load:
 * made as a temporary file and published whole (store/output-file.ts), so
 * that a reader waiting for the file (a live viewer) finds it with its meta
 * and the writer's mark. Closed again: the native ingest writes it next
 * (never two SQLite libraries on one file in one process). Returns the
 * index DDL the ingest builds when it finishes.
 */
export function beginRecordingFile(output: string, meta: Record<string, string | boolean | undefined>, opts: { overwrite?: boolean } = {}): string[] {
  const out = beginOutput(output, opts);
  try {
    const indexSql = prepareRecordingFile(out.temp, output, meta);
    out.publish();
    return indexSql;
  } catch (err) {
    out.discard();
    throw err;
  }
}

/**
 * Fills `file` (empty: an output's temporary file) with an empty
 * recording, `meta` and the writer's mark, its indexes dropped for the
 * load; errors are said of `output`, the name the user gave. Returns the
 * index DDL, as beginRecordingFile.
 */
export function prepareRecordingFile(file: string, output: string, meta: Record<string, string | boolean | undefined>): string[] {
  try {
    const db = createRecording(file);
    try {
      writeMeta(db, meta);
      markWriting(db);
      return beginBulkLoad(db);
    } finally {
      db.close();
    }
  } catch (err) {
    // No room for even an empty recording (a full disk): said of the output the user named.
    const message = err instanceof RecordingFileError ? err.problem : (err as Error).message;
    throw new RecordingFileError(output, message.startsWith('cannot create') ? message : `cannot create: ${message}`, { cause: err });
  }
}

export interface FollowOptions<T> {
  ingest: StreamDirectoryIngest;
  /** Index DDL from beginRecordingFile, built when the streams are done. */
  indexSql: string[];
  /** Settles when the streams' writers are done (the target has exited); a rejection ends the follow with it. */
  ended: Promise<T>;
  pollMs?: number;
  /** After an ingest poll while the writers run (at most every PROGRESS_MS). */
  onProgress?: (p: DirectoryProgress) => void;
  /** The writers are done: before the last ingest and the indexes. */
  onEnded?: (value: T, p: DirectoryProgress) => void;
}

/**
 * Ingests the streams while `ended` is pending, then once more with
 * `final` (a stream cut short is reported, not waited for), and finishes
 * the ingest (indexes). A stream that cannot be read stops the ingest and
 * is returned as `error`: the writers are still waited for, and what was
 * stored before it is kept.
 */
export async function followStreams<T>(opts: FollowOptions<T>): Promise<{ value: T; progress: DirectoryProgress; error: Error | null }> {
  const { ingest } = opts;
  let done = false;
  // The loop only needs to know that the writers are done; a rejection is rethrown below.
  opts.ended.then(
    () => (done = true),
    () => (done = true),
  );
  const pollMs = opts.pollMs ?? POLL_MS;
  let error: Error | null = null;
  let told = 0;
  try {
    while (!done) {
      await new Promise((r) => setTimeout(r, pollMs));
      if (done) break;
      try {
        const p = await ingest.poll(false);
        if (opts.onProgress && Date.now() - told >= PROGRESS_MS) {
          told = Date.now();
          opts.onProgress(p);
        }
      } catch (err) {
        // A corrupt stream: stop ingesting it, let the writers finish, report.
        error = err as Error;
        break;
      }
    }
    const value = await opts.ended;
    opts.onEnded?.(value, ingest.progress());
    if (!error) {
      try {
        await ingest.poll(true);
      } catch (err) {
        error = err as Error;
      }
    }
    return { value, progress: ingest.progress(), error };
  } finally {
    await ingest.finish(opts.indexSql);
  }
}
