// `streamscope ingest`: builds a recording from record-stream files written
// elsewhere (for example by the collector alone on a GPU server without
// Node, or kept by a recorder that could not finish).
//
// Written as a temporary file and published when finished
// (store/output-file.ts), unlike `record`'s, which is published first so
// that it can be watched as it grows: an ingest killed part way leaves the
// output as it was (and its temporary to the next writer's sweep), never a
// recording with a hot journal that every read-only open refused. When
// the ingest fails part way, what was stored is kept, marked incomplete,
// where that replaces nothing; a failed ingest never replaces a file.
import fs from 'node:fs';
import path from 'node:path';
import { beginOutput, OutputRefusedError, type OutputFile } from '../store/output-file.ts';
import { RecordingFileError, writeFailureOf } from '../store/recording-error.ts';
import { RecordError } from './record-error.ts';
import { finalizeRecording, type FinalState } from './finalize.ts';
import { prepareRecordingFile } from './recording-file.ts';
import { STREAM_FILE_SUFFIX, StreamDirectoryIngest } from './stream-ingest.ts';

/** The stream files `inputs` name: files as given, directories by their .ssr files. */
function streamFiles(inputs: string[]): string[] {
  const files: string[] = [];
  for (const input of inputs) {
    if (!fs.existsSync(input)) throw new RecordError(`${input}: no such file or directory`);
    if (fs.statSync(input).isDirectory()) {
      const found = fs
        .readdirSync(input)
        .filter((f) => f.endsWith(STREAM_FILE_SUFFIX))
        .sort();
      if (found.length === 0) throw new RecordError(`${input}: no ${STREAM_FILE_SUFFIX} record streams in this directory`);
      for (const f of found) files.push(path.join(input, f));
    } else {
      files.push(input);
    }
  }
  return files;
}

export async function ingestStreamFiles(output: string, inputs: string[], opts: { overwrite?: boolean } = {}): Promise<FinalState> {
  const files = streamFiles(inputs);
  // Every stream and every directory named is an input: never the output, --force or not.
  const out = beginOutput(output, { overwrite: opts.overwrite, inputs: [...inputs, ...files] });
  let state: FinalState;
  let error: Error | null = null;
  try {
    const indexSql = prepareRecordingFile(out.temp, output, {
      source: 'streamscope-ingest',
      ingested_from: JSON.stringify(files.map((f) => path.resolve(f))),
    });
    const ingest = new StreamDirectoryIngest(out.temp, { files });
    try {
      await ingest.poll(true);
    } catch (err) {
      error = err as Error;
    } finally {
      await ingest.finish(indexSql);
    }
    state = finalizeRecording(out.temp, ingest.progress(), null, null, error, undefined, { shownAs: output });
  } catch (err) {
    // Not even an incomplete recording could be finished (the disk is full).
    out.discard();
    throw saidOfOutput(err, out, false);
  }
  if (!error) {
    out.publish();
    return state;
  }
  // What was valid before the problem is stored, marked incomplete: kept where it replaces nothing.
  let kept = false;
  if (!out.existed) {
    try {
      out.publish({ replace: false });
      kept = true;
    } catch {
      // published by another command meanwhile, or no room for the name: the temporary is gone, nothing written
    }
  } else out.discard();
  throw saidOfOutput(error, out, kept);
}

/**
 * An ingest's failure in one line, of the output the user named (never its
 * temporary file), saying what became of the output: `kept`, it holds what
 * was stored before the failure, marked incomplete; else nothing was written.
 */
function saidOfOutput(err: unknown, out: OutputFile, kept: boolean): Error {
  if (err instanceof OutputRefusedError) return err;
  const asItWas = out.existed ? ' (it is as it was)' : '';
  const outcome = kept ? 'it holds what was stored before the failure, marked incomplete' : `nothing was written${asItWas}`;
  // The native ingest names the file it could not write first: the temporary's name goes.
  const message = (err as Error).message ?? String(err);
  const at = message.indexOf(`${out.temp}: `);
  if (at >= 0) return new RecordingFileError(out.path, `cannot write: ${message.slice(at + out.temp.length + 2)}; ${outcome}`, { cause: err });
  if (err instanceof RecordingFileError && err.file === out.temp) return new RecordingFileError(out.path, `${err.problem}; ${outcome}`, { cause: err });
  const written = writeFailureOf(err, out.path);
  if (written) return new RecordingFileError(out.path, `${written.problem}; ${outcome}`, { cause: err });
  // A stream that could not be read, named first: what became of the output follows.
  const e = err as Error;
  e.message = `${message.replaceAll(out.temp, out.path)}; ${kept ? `${out.path} holds what was read before it, marked incomplete` : `nothing was written to ${out.path}${asItWas}`}`;
  return e;
}
