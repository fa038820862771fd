// Reads a Chrome-trace JSON file (`{"traceEvents": [...], ...}` or a bare
// `[...]` array of events) as a stream: each event object is parsed on its
// own, so a 1 GB trace never sits in memory as one string or one object
// tree. Other top-level members (Kineto's deviceProperties,
// baseTimeNanoseconds, ...) are collected as they pass, up to a size cap.
// The generic Chrome importer reads through traceEvents() below; the Kineto
// importer through the addon (native/addon/src/trace_import.cc), which scans
// by the same rules and reports its errors as nativeTraceError() turns them
// into TraceFormatErrors.
import fs from 'node:fs';
import { StringDecoder } from 'node:string_decoder';
import { oneLine } from '../store/recording-error.ts';

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

/** Top-level members other than traceEvents, larger than this, are skipped. */
const MEMBER_CAP = 16 * 2 ** 20;

export interface TraceHeader {
  /** Top-level members seen so far (complete once the iteration ends). */
  members: Record<string, unknown>;
}

/**
 * Yields every element of the trace's event array, in file order. Throws
 * TraceFormatError naming the file and the byte offset for malformed JSON.
 */
export async function* traceEvents(file: string, header: TraceHeader = { members: {} }): AsyncGenerator<Record<string, unknown>> {
  const decoder = new StringDecoder('utf8');
  let depth = 0;
  let inString = false;
  let escape = false;
  let offset = 0; // characters consumed before the current chunk
  let sawRoot = false;
  let bareArray = false;
  // depth-1 object member tracking
  let key: string | null = null;
  let keyText = '';
  let readingKey = false;
  let afterColon = false;
  let inEvents = false;
  let capture: string[] | null = null; // text of the event or member being captured
  let captureStartDepth = 0;
  let captureSize = 0;
  let captureMember: string | null = null;
  let pendingEvents: Record<string, unknown>[] = [];

  const fail = (at: number, problem: string): never => {
    throw new TraceFormatError(file, `${problem} (at character ${at})`);
  };

  const parseCaptured = (at: number): unknown => {
    const text = capture!.join('');
    capture = null;
    try {
      return JSON.parse(text);
    } catch (err) {
      return fail(at, `malformed JSON: ${(err as Error).message}`);
    }
  };

  const stream = fs.createReadStream(file, { highWaterMark: 1 << 20 });
  try {
    for await (const chunk of stream as AsyncIterable<Buffer>) {
      const text = decoder.write(chunk);
      let segStart = 0; // start of the part of `text` still to append to capture
      for (let i = 0; i < text.length; i++) {
        const ch = text.charCodeAt(i);
        if (inString) {
          if (escape) escape = false;
          else if (ch === 92 /* \\ */) escape = true;
          else if (ch === 34 /* " */) {
            inString = false;
            if (readingKey) readingKey = false;
          } else if (readingKey) keyText += text[i];
          continue;
        }
        switch (ch) {
          case 34: // "
            inString = true;
            if (depth === 1 && !bareArray && !afterColon && capture === null) {
              readingKey = true;
              keyText = '';
            }
            break;
          case 58: // :
            if (depth === 1 && !bareArray && capture === null) {
              key = keyText;
              afterColon = true;
              if (key !== 'traceEvents') {
                // Capture this member's value from the next character.
                capture = [];
                captureStartDepth = depth;
                captureSize = 0;
                captureMember = key;
                segStart = i + 1;
              }
            }
            break;
          case 123: // {
          case 91: {
            // [
            if (!sawRoot) {
              sawRoot = true;
              if (ch === 91) {
                bareArray = true;
                inEvents = true;
              }
            } else if (inEvents && capture === null && depth === (bareArray ? 1 : 2) && ch === 123) {
              capture = [];
              captureStartDepth = depth;
              captureMember = null;
              segStart = i;
            } else if (depth === 1 && key === 'traceEvents' && afterColon && ch === 91) {
              inEvents = true;
            }
            depth++;
            break;
          }
          case 125: // }
          case 93: {
            // ]
            depth--;
            if (depth < 0) fail(offset + i, `unbalanced '${text[i]}'`);
            if (capture !== null && captureMember === null && depth === captureStartDepth) {
              capture.push(text.slice(segStart, i + 1));
              const ev = parseCaptured(offset + i);
              if (ev && typeof ev === 'object' && !Array.isArray(ev)) pendingEvents.push(ev as Record<string, unknown>);
            } else if (inEvents && depth === (bareArray ? 0 : 1) && ch === 93) {
              inEvents = false;
            }
            if (depth === 0 && !bareArray && capture !== null && captureMember !== null) {
              // The root closed while capturing its last member's value.
              capture.push(text.slice(segStart, i));
              finishMember(offset + i);
            }
            break;
          }
          case 44: // ,
            if (depth === 1 && !bareArray) {
              if (capture !== null && captureMember !== null) {
                capture.push(text.slice(segStart, i));
                finishMember(offset + i);
              }
              afterColon = false;
              key = null;
            }
            break;
          default:
            break;
        }
      }
      if (capture !== null) {
        const part = text.slice(segStart);
        captureSize += part.length;
        if (captureMember !== null && captureSize > MEMBER_CAP) {
          capture = null; // too big to be metadata: skip it
        } else {
          capture.push(part);
        }
      }
      offset += text.length;
      if (pendingEvents.length) {
        const batch = pendingEvents;
        pendingEvents = [];
        yield* batch;
      }
    }
  } catch (err) {
    if (err instanceof TraceFormatError) throw err;
    const e = err as NodeJS.ErrnoException;
    if (e.code === 'ENOENT') throw new TraceFormatError(file, 'no such file');
    if (e.code === 'EISDIR') throw new TraceFormatError(file, 'is a directory');
    throw new TraceFormatError(file, `cannot read: ${e.message}`);
  }
  if (!sawRoot) throw new TraceFormatError(file, 'empty file or not JSON (expected a Chrome trace: {"traceEvents": [...]})');
  if (depth !== 0 || inString)
    throw new TraceFormatError(file, `truncated JSON: the file ends inside ${inString ? 'a string' : 'an object or array'} (at character ${offset})`);

  function finishMember(at: number): void {
    const name = captureMember!;
    const value = parseCaptured(at);
    header.members[name] = value;
    captureMember = null;
  }
}
