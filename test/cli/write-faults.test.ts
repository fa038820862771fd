// Write errors while StreamScope writes a file (issue 15, part 2): the
// commands that write — ingest, import, export, merge — run as a user runs
// them, with the file size limit of their process set so that the kernel
// refuses their writes part way (RLIMIT_FSIZE, SIGXFSZ ignored: write(2)
// fails with EFBIG, as it fails with ENOSPC on a full disk; no privilege
// needed, unlike mounting a small file system). Each must say so in one
// line naming the output the user gave (never a temporary file, never a
// stack trace), leave no half-written file that could be taken for a good
// one, and leave its inputs as they were. The GPU side of the same faults
// (a full file system under the collector and the recorder) is
// test/gpu/faults.test.ts; docs/RELIABILITY.md lists both.
import crypto from 'node:crypto';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generate } from '../../bench/generate-recording.ts';
import { generateRanks } from '../../bench/generate-ranks.ts';
import { repoRoot } from '../../profiler/native/paths.ts';
import { openRecording, readMeta } from '../../profiler/store/database.ts';
import { syntheticStream, tempDir } from '../helpers/native.ts';

const cli = path.join(repoRoot, 'profiler/cli/streamscope.ts');
let dir: string;
beforeAll(() => {
  dir = tempDir('write-faults');
});
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

/** The CLI with its files limited to `kib` KiB: writes past that fail with EFBIG. */
function limited(kib: number, args: string[]) {
  const r = spawnSync('bash', ['-c', `ulimit -f ${kib}; trap '' XFSZ; exec "$@"`, 'limited', process.execPath, cli, ...args], { encoding: 'utf8', cwd: dir });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

const hash = (f: string) => crypto.createHash('sha256').update(fs.readFileSync(f)).digest('hex');

/** The files of `dir` now (temporary ones start with a dot). */
const listing = () => fs.readdirSync(dir).sort();

/** One line, naming `output`, saying the write failed; no stack trace. */
function saysWriteFailed(stderr: string, output: string): void {
  const lines = stderr.trim().split('\n');
  expect(lines, stderr).toHaveLength(1);
  expect(lines[0]).toContain(output);
  expect(lines[0]).toMatch(/too large|I\/O error|full|cannot (write|create)/i);
}

describe('a write that fails part way: one line naming the output, no half-written file, inputs unchanged', () => {
  // The empty recording takes ~2.3 MB (64 KiB pages, a page per table): limits above that fail part way through the rows.
  const LIMIT_KIB = 3_000;

  it('ingest of a record stream', () => {
    const { stream } = syntheticStream(dir, 'big', ['--bench-launches', '200000']);
    expect(fs.statSync(stream).size).toBeGreaterThan(8 * 2 ** 20);
    const before = hash(stream);
    const before_ = listing();
    const out = path.join(dir, 'ingested.sqlite');
    const r = limited(LIMIT_KIB, ['ingest', '-o', out, stream]);
    expect(r.code).not.toBe(0);
    saysWriteFailed(r.stderr, out);
    expect(r.stderr).toMatch(/; it holds what was stored before the failure, marked incomplete\n$/);
    expect(hash(stream)).toBe(before);
    // The recording stays, with what was stored before the failure, and says it is incomplete and why: never taken for a whole one.
    expect(listing()).toEqual([...before_, 'ingested.sqlite'].sort());
    const db = openRecording(out, { readonly: true });
    try {
      const meta = readMeta(db);
      expect(meta.get('complete')).toBe('0');
      expect(meta.get('incomplete_reason')).toMatch(/^writing the recording failed/);
      expect(db.pragma('integrity_check', { simple: true })).toBe('ok');
    } finally {
      db.close();
    }
  });

  it('ingest --force over an existing recording: nothing replaced, and said so (issue 27)', () => {
    const stream = path.join(dir, 'big.ssr'); // the test above's
    const out = path.join(dir, 'ingested.sqlite');
    const before = hash(out);
    const before_ = listing();
    const r = limited(LIMIT_KIB, ['ingest', '--force', '-o', out, stream]);
    expect(r.code).not.toBe(0);
    saysWriteFailed(r.stderr, out);
    expect(r.stderr).toMatch(/; nothing was written \(it is as it was\)\n$/);
    // A failed command never replaces a file: the earlier recording stays whole, and nothing of this one is left.
    expect(hash(out)).toBe(before);
    expect(listing()).toEqual(before_);
  });

  it('import of a Chrome trace', () => {
    const rec = path.join(dir, 'gen.sqlite');
    generate(rec, 200_000, 4, { seed: 7 });
    const trace = path.join(dir, 'gen.json');
    const e = spawnSync(process.execPath, [cli, 'export', rec, '-o', trace], { encoding: 'utf8' });
    expect(e.status, e.stderr).toBe(0);
    const before = hash(trace);
    const before_ = listing();
    const out = path.join(dir, 'imported.sqlite');
    const r = limited(LIMIT_KIB, ['import', trace, '-o', out]);
    expect(r.code).not.toBe(0);
    saysWriteFailed(r.stderr, out);
    expect(hash(trace)).toBe(before);
    expect(listing()).toEqual(before_);
  });

  it('export to a Chrome trace', () => {
    const rec = path.join(dir, 'gen-export.sqlite');
    generate(rec, 50_000, 4, { seed: 8 });
    const before = hash(rec);
    const before_ = listing();
    const out = path.join(dir, 'exported.json');
    const r = limited(512, ['export', rec, '-o', out]);
    expect(r.code).not.toBe(0);
    saysWriteFailed(r.stderr, out);
    expect(hash(rec)).toBe(before);
    expect(listing()).toEqual(before_);
  });

  it('merge of ranks', () => {
    const ranks = generateRanks(path.join(dir, 'ranks'), 3, 60_000, 4).map((g) => g.file);
    const before = ranks.map(hash);
    const before_ = listing();
    const out = path.join(dir, 'job.sqlite');
    const r = limited(LIMIT_KIB + 2_000, ['merge', ...ranks, '-o', out]);
    expect(r.code).not.toBe(0);
    saysWriteFailed(r.stderr, out);
    expect(ranks.map(hash)).toEqual(before);
    expect(listing()).toEqual(before_);
  });
});
