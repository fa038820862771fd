// `streamscope import`: one importer per format (Kineto, generic Chrome trace
// events, Nsight Systems SQLite), chosen by the content's first bytes, then
// by the file name. Each importer writes through RecordingWriter.
import fs from 'node:fs';
import { importChrome } from './chrome.ts';
import { importKineto, type ImportResult } from './kineto.ts';
import { importNsys } from './nsys.ts';
import { TraceFormatError } from './json-events.ts';
import { checkOutput } from '../store/output-file.ts';
import { writeFailureOf } from '../store/recording-error.ts';

export type ImportFormat = 'kineto' | 'chrome' | 'nsys';

export const IMPORT_FORMATS: readonly ImportFormat[] = ['kineto', 'chrome', 'nsys'];

/** What only Kineto-convention traces carry in their first 64 KiB. */
const KINETO_MARKS = /"schemaVersion"|"deviceProperties"|"cat"\s*:\s*"(kernel|gpu_memcpy|gpu_memset|cuda_runtime|cuda_driver|cpu_op|ac2g)"/;

/** Picks the importer: an explicit format, else the content (SQLite → Nsight export, JSON → Chrome trace), else the name. */
export function detectFormat(file: string, explicit?: string): ImportFormat {
  if (explicit) {
    if (!(IMPORT_FORMATS as readonly string[]).includes(explicit)) {
      throw new TraceFormatError(file, `unknown format '${explicit}' (known: ${IMPORT_FORMATS.join(', ')})`);
    }
    return explicit as ImportFormat;
  }
  let head: Buffer;
  try {
    const fd = fs.openSync(file, 'r');
    try {
      head = Buffer.alloc(64 * 1024);
      head = head.subarray(0, fs.readSync(fd, head, 0, head.length, 0));
    } finally {
      fs.closeSync(fd);
    }
  } catch (err) {
    const e = err as NodeJS.ErrnoException;
    throw new TraceFormatError(file, e.code === 'ENOENT' ? 'no such file' : e.code === 'EISDIR' ? 'is a directory' : `cannot read: ${e.message}`);
  }
  if (head.subarray(0, 16).toString('latin1') === 'SQLite format 3\0') {
    // Nsight's export; a StreamScope recording needs no import (importNsys says so if it is neither).
    return 'nsys';
  }
  const text = head.toString('utf8');
  if (/^\s*[[{]/.test(text) && /"traceEvents"|"ph"\s*:/.test(text)) {
    // Chrome-trace JSON. Kineto's (and StreamScope's own export, which uses
    // its conventions) opens with its schema and device facts, and names
    // CUDA work by category; anything else is generic trace events.
    return KINETO_MARKS.test(text) ? 'kineto' : 'chrome';
  }
  if (/\.json$/i.test(file)) return 'chrome';
  throw new TraceFormatError(
    file,
    `not a trace StreamScope can import (expected Chrome trace JSON — PyTorch profiler's export_chrome_trace, or any trace events — or an Nsight Systems SQLite export)`,
  );
}

/** `parseAllInJs`: the Kineto reader's JSON.parse path for every event (kineto.ts; the tests hold it to the simdjson one). */
export async function importTrace(
  file: string,
  out: string,
  opts: { format?: string; overwrite?: boolean; parseAllInJs?: boolean } = {},
): Promise<ImportResult> {
  // An output that may not be written is said before the trace is read (the importer's writer checks again when it begins).
  checkOutput(out, { overwrite: opts.overwrite, inputs: [file] });
  const format = detectFormat(file, opts.format);
  try {
    switch (format) {
      case 'kineto':
        return await importKineto(file, out, { overwrite: opts.overwrite, parseAllInJs: opts.parseAllInJs });
      case 'chrome':
        return await importChrome(file, out, { overwrite: opts.overwrite });
      case 'nsys':
        return await importNsys(file, out, { overwrite: opts.overwrite });
    }
  } catch (err) {
    // The importers remove their half-written file; a failed write is the output's problem, not the trace's.
    throw writeFailureOf(err, out) ?? err;
  }
}
