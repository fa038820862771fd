// Real Kineto traces made odd in the ways issue 27 found (failures 5 and
// 8), each imported through both of the Kineto reader's paths (simdjson,
// and JSON.parse for every event) where that matters:
// - whitespace, or a large member, before the keys that tell a Kineto trace
//   (detection read only the first 64 KiB: a Kineto trace after 70 KB of
//   blanks imported as a generic Chrome trace);
// - keys written twice, in an event or in its args: the last wins, as
//   JSON.parse has it;
// - a copy's or memset's `bytes` that is not a size (1e400, 2^53, negative,
//   text, a list): the event skipped and counted, as a field of the wrong
//   type is, not stored as 0 bytes;
// - one event larger than an event may be (json-events.ts MAX_EVENT_BYTES,
//   2^29 − 24 bytes; lowered here through maxEventBytes, as no test writes
//   512 MiB): refused naming the trace and the event's byte offset, nothing
//   left beside the output (an event of 2 GiB aborted Node and left the
//   temporary file).
import fs from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';
import { detectFormat, importTrace } from '../../profiler/import/index.ts';
import { MAX_EVENT_BYTES, TraceFormatError } from '../../profiler/import/json-events.ts';
import { tempDir } from '../helpers/native.ts';

const root = path.resolve(import.meta.dirname, '../..');
const streamsSync = path.join(root, 'test/fixtures/kineto/torch_streams_sync_h200.json');
const trainLoop = path.join(root, 'test/fixtures/kineto/torch_train_loop_fixed_h200.json');
const dir = tempDir('odd-traces');
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

/** The first memcpy of torch_streams_sync_h200 (HtoD, stream 13, 1 MiB): its args, and its dur. */
const COPY_ARGS = '"stream": 13, "correlation": 724,      "bytes": 1048576, "memory bandwidth (GB/s)": 42.66840284842319';
const COPY_DUR = '"ts": 5010235469256.261, "dur": 24.575,';
/** The first memset of torch_train_loop_fixed_h200 (512 bytes). */
const MEMSET_ARGS = '"stream": 7, "correlation": 2407,      "bytes": 512, "memory bandwidth (GB/s)": 0.45714285714285713';

let n = 0;
/** `trace` with `from` replaced by `to` (present once), written to a file of its own. */
function variant(trace: string, from: string, to: string): string {
  const text = fs.readFileSync(trace, 'utf8');
  expect(text.split(from).length, from).toBe(2);
  const file = path.join(dir, `variant-${n++}.json`);
  fs.writeFileSync(file, text.replace(from, to));
  return file;
}

function rows<T>(file: string, sql: string): T[] {
  const db = new Database(file, { readonly: true });
  try {
    return db.prepare(sql).all() as T[];
  } finally {
    db.close();
  }
}
const FIRST_COPY =
  'SELECT m.bytes, m.end_ns - m.start_ns AS ns, s.cupti_stream_id AS stream FROM memcpys m JOIN streams s ON s.id = m.stream_id WHERE m.correlation_id = 724';

const paths = [
  ['simdjson', false],
  ['JSON.parse', true],
] as const;

describe('format detection reads past what comes before the keys that decide', () => {
  it('a Kineto trace after 70 KB (and 20 MB) of whitespace is Kineto', async () => {
    const text = fs.readFileSync(streamsSync, 'utf8');
    const original = await importTrace(streamsSync, path.join(dir, 'original.sqlite'));
    for (const blanks of [70_000, 20 << 20]) {
      const file = path.join(dir, `blank-${blanks}.json`);
      fs.writeFileSync(file, ' \n\t\r'.repeat(blanks / 4) + text);
      expect(detectFormat(file), `${blanks}`).toBe('kineto');
      const r = await importTrace(file, path.join(dir, `blank-${blanks}.sqlite`));
      expect(r).toEqual(original);
    }
  }, 60_000);

  it('a Kineto trace whose first member is 1 MB long is Kineto (its marks come after the first 64 KiB)', () => {
    const text = fs.readFileSync(streamsSync, 'utf8');
    expect(text.trimStart().startsWith('{')).toBe(true);
    const file = path.join(dir, 'long-first-member.json');
    fs.writeFileSync(file, `{"comment": "${'x'.repeat(1 << 20)}",` + text.trimStart().slice(1));
    expect(detectFormat(file)).toBe('kineto');
  });

  it('a trace of other events after blanks is still a generic Chrome trace, and blanks alone are not a trace', () => {
    const file = path.join(dir, 'generic.json');
    fs.writeFileSync(file, '\n'.repeat(100_000) + '{"traceEvents": [{"ph": "X", "name": "work", "pid": 1, "tid": 1, "ts": 1, "dur": 2}]}');
    expect(detectFormat(file)).toBe('chrome');
    const blank = path.join(dir, 'blank.txt');
    fs.writeFileSync(blank, ' '.repeat(200_000));
    expect(() => detectFormat(blank)).toThrow(/not a trace StreamScope can import/);
  });
});

describe('keys written twice: the last wins, as in JSON.parse', () => {
  it.each(paths)('in args (bytes, stream) and in the event (dur), through %s', async (_name, parseAllInJs) => {
    const file = variant(streamsSync, COPY_ARGS, `${COPY_ARGS}, "bytes": 7, "stream": 99`);
    const twice = fs.readFileSync(file, 'utf8').replace(COPY_DUR, `${COPY_DUR} "dur": 50,`);
    fs.writeFileSync(file, twice);
    const out = path.join(dir, `twice-${parseAllInJs}.sqlite`);
    await importTrace(file, out, { parseAllInJs });
    expect(rows(out, FIRST_COPY)).toEqual([{ bytes: 7, ns: 50_000, stream: 99 }]);
  });
});

describe("a copy's or memset's bytes that is not a size skips the event, counted", () => {
  const bad = ['1e400', '9007199254740992', '1e20', '-5', '"many"', '[1048576]', '{}'];
  it.each(paths)(
    'memcpy and memset, through %s',
    async (_name, parseAllInJs) => {
      const base = {
        copy: await importTrace(streamsSync, path.join(dir, `copy-base-${parseAllInJs}.sqlite`), { parseAllInJs }),
        memset: await importTrace(trainLoop, path.join(dir, `memset-base-${parseAllInJs}.sqlite`), { parseAllInJs }),
      };
      for (const value of bad) {
        const copy = variant(streamsSync, COPY_ARGS, COPY_ARGS.replace('"bytes": 1048576', `"bytes": ${value}`));
        const out = path.join(dir, `copy-${n}.sqlite`);
        const r = await importTrace(copy, out, { parseAllInJs });
        expect([r.counts.memcpys, r.skipped], value).toEqual([base.copy.counts.memcpys - 1, base.copy.skipped + 1]);
        expect(rows(out, FIRST_COPY), value).toEqual([]);
        expect(rows(out, 'SELECT count(*) AS n FROM memcpys WHERE bytes = 0'), value).toEqual([{ n: 0 }]);

        const memset = variant(trainLoop, MEMSET_ARGS, MEMSET_ARGS.replace('"bytes": 512', `"bytes": ${value}`));
        const m = await importTrace(memset, path.join(dir, `memset-${n}.sqlite`), { parseAllInJs });
        expect([m.counts.memsets, m.skipped], value).toEqual([base.memset.counts.memsets - 1, base.memset.skipped + 1]);
      }
    },
    60_000,
  );

  it('a size the trace does not give (null, or no bytes at all) is 0, as before; a string of a size, or a fraction, is read', async () => {
    for (const [args, bytes] of [
      [COPY_ARGS.replace('"bytes": 1048576', '"bytes": null'), 0],
      [COPY_ARGS.replace('"bytes": 1048576, ', ''), 0],
      [COPY_ARGS.replace('"bytes": 1048576', '"bytes": "4096"'), 4096],
      [COPY_ARGS.replace('"bytes": 1048576', '"bytes": 4096.9'), 4096],
    ] as const) {
      const out = path.join(dir, `size-${n}.sqlite`);
      const r = await importTrace(variant(streamsSync, COPY_ARGS, args), out);
      expect(r.skipped, args).toBe((await importTrace(streamsSync, path.join(dir, `size-base-${n}.sqlite`))).skipped);
      expect(rows<{ bytes: number }>(out, FIRST_COPY)[0]!.bytes, args).toBe(bytes);
    }
  }, 60_000);
});

describe('an event larger than an event may be', () => {
  it('the limit is the longest string JSON.parse can read', () => {
    expect(MAX_EVENT_BYTES).toBe(2 ** 29 - 24);
  });

  // One event's name made `size` bytes long: the kernel after the first memcpy.
  const bigEvent = (size: number) => {
    const name = '"name": "Memcpy HtoD (Pinned -> Device)"';
    const file = variant(streamsSync, `${name}, "pid": 0, "tid": 13,\n    ${COPY_DUR}`, `"name": "${'m'.repeat(size)}", "pid": 0, "tid": 13,\n    ${COPY_DUR}`);
    const bytes = fs.readFileSync(file);
    const at = bytes.lastIndexOf('{', bytes.indexOf(`"${'m'.repeat(16)}`));
    return { file, at };
  };

  const cases = [
    // Closed within one read of the scan (checked when it ends; the trace's own events are under 6 KB, pretty-printed),
    // and 5 MiB (checked while it is still open, before the rest is read).
    ['64 KiB, limit 16 KiB', 64 << 10, 16 << 10],
    ['5 MiB, limit 1 MiB', 5 << 20, 1 << 20],
  ] as const;
  for (const format of ['kineto', 'chrome'] as const) {
    it.each(cases)(
      `${format}: %s — refused naming its byte offset, nothing imported, nothing left`,
      async (_name, size, limit) => {
        const { file, at } = bigEvent(size);
        const work = path.join(dir, `big-${format}-${size}`);
        fs.mkdirSync(work);
        const out = path.join(work, 'out.sqlite');
        const err = await importTrace(file, out, { format, maxEventBytes: limit }).catch((e: unknown) => e);
        expect(err).toBeInstanceOf(TraceFormatError);
        expect((err as Error).message).toBe(
          `${file}: the event starting at byte ${at.toLocaleString('en-US')} is larger than ${limit.toLocaleString('en-US')} bytes, ` +
            'the most one event can be (the longest text JSON.parse can read); nothing was imported',
        );
        expect(fs.readdirSync(work)).toEqual([]);
        // Under the real limit the same trace imports.
        await importTrace(file, out, { format });
        expect(fs.readdirSync(work)).toEqual(['out.sqlite']);
      },
      60_000,
    );
  }
});
