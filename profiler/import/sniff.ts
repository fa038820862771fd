// What a file to import is, from its content (index.ts detectFormat picks
// the importer from it): an SQLite database (an Nsight Systems export), or
// Chrome-trace JSON, and then whether it follows Kineto's conventions.
//
// The JSON is read from its first non-blank byte, and only as far as the
// keys that decide: the blanks before it are skipped whatever their length
// (a trace after 70 KB of whitespace was read as the blanks alone, and a
// Kineto trace imported as a generic one: issue 27), since the import reads
// every byte of them anyway; from there at most SNIFF_BYTES, where a Kineto
// trace has long shown its marks (its first member is schemaVersion, and
// its first events name their category) and a generic trace, which has
// none, stops being read.
import fs from 'node:fs';
import { StringDecoder } from 'node:string_decoder';

/** What only Kineto-convention traces carry (StreamScope's own export uses them too). */
const KINETO_MARKS = /"schemaVersion"|"deviceProperties"|"cat"\s*:\s*"(kernel|gpu_memcpy|gpu_memset|cuda_runtime|cuda_driver|cpu_op|ac2g)"/;
/** What any Chrome trace carries: its array of events, or an event's phase. */
const TRACE_MARKS = /"traceEvents"|"ph"\s*:/;
/** JSON's blanks, and a UTF-8 byte order mark at the start (which the scan passes over too). */
const BLANK = new Set([0x20, 0x09, 0x0a, 0x0d]);
const BOM = [0xef, 0xbb, 0xbf];

/** The most JSON text read for the marks, from the first non-blank byte. */
export const SNIFF_BYTES = 16 << 20;
const READ_BYTES = 1 << 20;
/** A mark cut by the end of a read is found in the next: the text searched again from this far back. */
const MARK_OVERLAP = 256;

export interface Sniffed {
  /** SQLite's header: an Nsight Systems export (or a recording, which needs no import). */
  sqlite: boolean;
  /** JSON text opening an object or an array, with the keys of a Chrome trace. */
  trace: boolean;
  /** …and Kineto's marks. */
  kineto: boolean;
}

/** Reads the start of `file` (errors of opening and reading are thrown as Node's). */
export function sniffTrace(file: string): Sniffed {
  const fd = fs.openSync(file, 'r');
  try {
    const buf = Buffer.alloc(READ_BYTES);
    let at = 0;
    const read = () => {
      const n = fs.readSync(fd, buf, 0, buf.length, at);
      at += n;
      return buf.subarray(0, n);
    };
    let chunk = read();
    if (chunk.subarray(0, 16).toString('latin1') === 'SQLite format 3\0') return { sqlite: true, trace: false, kineto: false };
    // The blanks, however many.
    let start = chunk.length >= 3 && BOM.every((b, i) => chunk[i] === b) ? 3 : 0;
    for (;;) {
      while (start < chunk.length && BLANK.has(chunk[start]!)) start++;
      if (start < chunk.length || chunk.length === 0) break;
      chunk = read();
      start = 0;
    }
    const json = chunk[start] === 0x7b || chunk[start] === 0x5b; // { or [
    if (!json) return { sqlite: false, trace: false, kineto: false };
    // The text, until both marks are seen or SNIFF_BYTES are read.
    const decoder = new StringDecoder('utf8');
    let text = '';
    let trace = false;
    let kineto = false;
    for (let taken = 0; chunk.length > 0 && taken < SNIFF_BYTES; chunk = read(), start = 0) {
      const part = chunk.subarray(start, start + Math.min(chunk.length - start, SNIFF_BYTES - taken));
      taken += part.length;
      const from = Math.max(0, text.length - MARK_OVERLAP);
      text = text.slice(from) + decoder.write(part);
      trace ||= TRACE_MARKS.test(text);
      kineto ||= KINETO_MARKS.test(text);
      if (trace && kineto) break;
    }
    return { sqlite: false, trace, kineto: trace && kineto };
  } finally {
    fs.closeSync(fd);
  }
}
