// Reads a Chrome-trace JSON file (`{"traceEvents": [...], ...}` or a bare
// `[...]` array of events) as a stream: each event object is parsed on its
// own, so a 1 GB trace never sits in memory as one string or one object
// tree. Other top-level members (Kineto's deviceProperties,
// baseTimeNanoseconds, ...) are collected as they pass, up to a size cap.
// The scan is native (native/addon/src/trace_import.cc: a byte loop over
// 4 MiB reads): the Kineto importer maps the events there too, the generic
// Chrome importer here, through forEachTraceEvent(); nativeTraceError()
// says their errors as TraceFormatErrors.
import { constants } from 'node:buffer';
import fs from 'node:fs';
import { StringDecoder } from 'node:string_decoder';
import { oneLine } from '../store/recording-error.ts';
import { scanTraceEvents } from '../native/addon.ts';

export class TraceFormatError extends Error {
  readonly file: string;
  readonly problem: string;
  constructor(file: string, problem: string) {
    // One line, whatever the trace put in it (JSON.parse quotes the text around a bad token).
    const line = oneLine(problem);
    super(`${file}: ${line}`);
    this.file = file;
    this.problem = line;
  }
}

// Fields of an event as the importers may use them. A trace can hold any
// JSON where a number or a name belongs; the importers skip an event whose
// field is not what it must be (counted as skipped), as they skip events
// of kinds they do not import. Found by fuzzing: a name that was a deeply
// nested array overflowed the stack when made a string, a pid that was
// text or a fraction failed SQLite's constraints half-way through.

/** A pid or tid: an integer, or a string of one (some tracers quote them); null for anything else. */
export function idField(v: unknown): number | null {
  const n = typeof v === 'number' ? v : typeof v === 'string' && v.trim() !== '' ? Number(v) : Number.NaN;
  return Number.isSafeInteger(n) ? n : null;
}

/** A name: a string, or a number as written; null for anything else (an object, an array, null). */
export function textField(v: unknown): string | null {
  return typeof v === 'string' ? v : typeof v === 'number' || typeof v === 'boolean' ? String(v) : null;
}

/** Microseconds (the format's unit), a number or a string of one, as nanoseconds: null unless finite. */
export function nsField(us: unknown): number | null {
  const n = typeof us === 'number' ? us : typeof us === 'string' && us.trim() !== '' ? Number(us) : Number.NaN;
  const ns = Math.round(n * 1000);
  return Number.isFinite(ns) ? ns : null;
}

/** An integer field (a count, a size, an id CUDA gave), a number or a string of one; null for anything else. */
export function intField(v: unknown): number | null {
  const n = typeof v === 'number' ? v : typeof v === 'string' && v.trim() !== '' ? Number(v) : Number.NaN;
  const t = Math.trunc(n);
  return Number.isSafeInteger(t) ? t : null;
}

/**
 * The native reader's error (code 'TRACE_FORMAT', its problem and the byte
 * offset where it is) as the TraceFormatError this file's reader throws:
 * the offset in characters of the decoded text, as always reported. Null
 * for any other error.
 */
export function nativeTraceError(file: string, err: unknown): TraceFormatError | null {
  const e = err as { code?: unknown; problem?: unknown; at?: unknown };
  if (e?.code !== 'TRACE_FORMAT' || typeof e.problem !== 'string') return null;
  const at = typeof e.at === 'number' && e.at >= 0 ? charactersBefore(file, e.at) : null;
  return new TraceFormatError(file, at === null ? e.problem : `${e.problem} (at character ${at})`);
}

/** How many UTF-16 characters the first `bytes` bytes of `file` decode to, as the stream decoder decodes them (errors only: it reads them again). */
function charactersBefore(file: string, bytes: number): number {
  const decoder = new StringDecoder('utf8');
  const buf = Buffer.alloc(1 << 20);
  let chars = 0;
  let fd: number | null = null;
  try {
    fd = fs.openSync(file, 'r');
    for (let done = 0; done < bytes;) {
      const n = fs.readSync(fd, buf, 0, Math.min(buf.length, bytes - done), done);
      if (n <= 0) break;
      chars += decoder.write(buf.subarray(0, n)).length;
      done += n;
    }
  } catch {
    return bytes; // the file went away: the bytes are the best we can say
  } finally {
    if (fd !== null) fs.closeSync(fd);
  }
  return chars;
}

/**
 * The most bytes one event of a trace may have: the longest string V8 makes
 * (2^29 − 24 characters on 64-bit; UTF-8 decodes to at most one character
 * a byte). Every event must be one JSON.parse can read — the generic Chrome
 * importer parses each so, the Kineto importer each that simdjson refuses or
 * whose fields need JavaScript's conversions — and simdjson's own limit
 * (4 GiB − 1) is above it. A larger event was buffered whole, then memory
 * ran out in simdjson or JSON.parse and Node aborted, leaving the import's
 * temporary file (issue 27: one event of 2 GiB); the scan now refuses it as
 * soon as it has read that many bytes of it, naming its byte offset, and the
 * importer removes its file. No trace a profiler writes comes near: an event
 * is a few hundred bytes. The importers take a lower limit for the tests
 * (importTrace's maxEventBytes), so that none needs to write 512 MiB.
 */
export const MAX_EVENT_BYTES = constants.MAX_STRING_LENGTH;

/** An event's bytes, as the native scan hands them to JavaScript: decoded as the stream always was (invalid UTF-8 replaced), parsed by JSON.parse. */
export const parseEventBytes = (bytes: Buffer): unknown => JSON.parse(bytes.toString('utf8'));

export interface TraceHeader {
  /** Top-level members seen (complete once the scan ends). */
  members: Record<string, unknown>;
}

/**
 * Calls `each` with every element of the trace's event array, in file
 * order, each parsed by JSON.parse; the top-level members go into
 * `read.header` where given. The scan is native
 * (native/addon/src/trace_import.cc, the one the Kineto importer reads
 * through). Throws TraceFormatError naming the file and the character
 * offset for malformed JSON, or the byte offset of an event over
 * `read.maxEventBytes` (MAX_EVENT_BYTES unless a test lowers it).
 */
export function forEachTraceEvent(file: string, read: { header?: TraceHeader; maxEventBytes?: number }, each: (e: Record<string, unknown>) => void): void {
  try {
    const members = scanTraceEvents(file, {
      maxEventBytes: read.maxEventBytes ?? MAX_EVENT_BYTES,
      parse: parseEventBytes,
      onEvents: (events) => {
        for (const e of events as Record<string, unknown>[]) each(e);
      },
    });
    if (read.header) Object.assign(read.header.members, members);
  } catch (err) {
    throw nativeTraceError(file, err) ?? err;
  }
}
