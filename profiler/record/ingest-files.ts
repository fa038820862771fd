// `streamscope ingest`: builds a recording from record-stream files written
// elsewhere (for example by the collector alone on a GPU server without
// Node, or kept by a recorder that could not finish).
import fs from 'node:fs';
import path from 'node:path';
import { RecordError } from './record-error.ts';
import { finalizeRecording, type FinalState } from './finalize.ts';
import { beginRecordingFile } from './recording-file.ts';
import { STREAM_FILE_SUFFIX, StreamDirectoryIngest } from './stream-ingest.ts';

export async function ingestStreamFiles(output: string, inputs: string[], opts: { overwrite?: boolean } = {}): Promise<FinalState> {
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
  const indexSql = beginRecordingFile(
    output,
    { source: 'streamscope-ingest', ingested_from: JSON.stringify(files.map((f) => path.resolve(f))) },
    { overwrite: opts.overwrite },
  );
  const ingest = new StreamDirectoryIngest(output, { files });
  let error: Error | null = null;
  try {
    await ingest.poll(true);
  } catch (err) {
    error = err as Error;
  } finally {
    await ingest.finish(indexSql);
  }
  const state = finalizeRecording(output, ingest.progress(), null, null, error);
  if (error) throw error; // what was valid before the problem is stored; the caller reports the problem
  return state;
}
