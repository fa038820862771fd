// `streamscope import`: one importer per format (Kineto, generic Chrome trace
// events, Nsight Systems SQLite), chosen by the content's first bytes, then
// by the file name. Each importer writes through RecordingWriter.
import { importChrome } from './chrome.ts';
import { importKineto, type ImportResult } from './kineto.ts';
import { importNsys } from './nsys.ts';
import { TraceFormatError } from './json-events.ts';
import { sniffTrace, type Sniffed } from './sniff.ts';
import { checkOutput } from '../store/output-file.ts';
import { writeFailureOf } from '../store/recording-error.ts';

export type ImportFormat = 'kineto' | 'chrome' | 'nsys';

export const IMPORT_FORMATS: readonly ImportFormat[] = ['kineto', 'chrome', 'nsys'];

/** Picks the importer: an explicit format, else the content (SQLite → Nsight export, JSON → Chrome trace), else the name. */
export function detectFormat(file: string, explicit?: string): ImportFormat {
  if (explicit) {
    if (!(IMPORT_FORMATS as readonly string[]).includes(explicit)) {
      throw new TraceFormatError(file, `unknown format '${explicit}' (known: ${IMPORT_FORMATS.join(', ')})`);
    }
    return explicit as ImportFormat;
  }
  let head: Sniffed;
  try {
    head = sniffTrace(file);
  } catch (err) {
    const e = err as NodeJS.ErrnoException;
    throw new TraceFormatError(file, e.code === 'ENOENT' ? 'no such file' : e.code === 'EISDIR' ? 'is a directory' : `cannot read: ${e.message}`);
  }
  if (head.sqlite) {
    // Nsight's export; a StreamScope recording needs no import (importNsys says so if it is neither).
    return 'nsys';
  }
  if (head.trace) {
    // Chrome-trace JSON. Kineto's (and StreamScope's own export, which uses
    // its conventions) opens with its schema and device facts, and names
    // CUDA work by category; anything else is generic trace events.
    return head.kineto ? 'kineto' : 'chrome';
  }
  if (/\.json$/i.test(file)) return 'chrome';
  throw new TraceFormatError(
    file,
    `not a trace StreamScope can import (expected Chrome trace JSON — PyTorch profiler's export_chrome_trace, or any trace events — or an Nsight Systems SQLite export)`,
  );
}

/**
 * `parseAllInJs`: the Kineto reader's JSON.parse path for every event
 * (kineto.ts; the tests hold it to the simdjson one); `maxEventBytes`: a
 * lower limit on one event than json-events.ts MAX_EVENT_BYTES, for the
 * tests.
 */
export async function importTrace(
  file: string,
  out: string,
  opts: { format?: string; overwrite?: boolean; parseAllInJs?: boolean; maxEventBytes?: number } = {},
): Promise<ImportResult> {
  // An output that may not be written is said before the trace is read (the importer's writer checks again when it begins).
  checkOutput(out, { overwrite: opts.overwrite, inputs: [file] });
  const format = detectFormat(file, opts.format);
  try {
    switch (format) {
      case 'kineto':
        return await importKineto(file, out, { overwrite: opts.overwrite, parseAllInJs: opts.parseAllInJs, maxEventBytes: opts.maxEventBytes });
      case 'chrome':
        return await importChrome(file, out, { overwrite: opts.overwrite, maxEventBytes: opts.maxEventBytes });
      case 'nsys':
        return await importNsys(file, out, { overwrite: opts.overwrite });
    }
  } catch (err) {
    // The importers remove their half-written file; a failed write is the output's problem, not the trace's.
    throw writeFailureOf(err, out) ?? err;
  }
}
