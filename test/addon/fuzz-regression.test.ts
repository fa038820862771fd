// The native fuzz targets (native/fuzz) as regression tests: each libFuzzer
// binary, built with ASan and UBSan by `npm test`'s pretest, runs every
// input of its committed corpus (test/fixtures/fuzz/<target>/: the inputs
// that crashed it once, each defect since fixed) and the real record
// streams, once each. A sanitizer report, an abort or an input slower than
// 10 s fails the test with libFuzzer's report. Also the seed cutting of
// `npm run fuzz` (scripts/fuzz.ts) on the real stream.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { NATIVE_TARGETS, nativeTargetPath, streamPieces } from '../../scripts/fuzz.ts';
import { requireFile } from '../helpers/native.ts';

const root = path.resolve(import.meta.dirname, '../..');
const streamsDir = path.join(root, 'test/fixtures/streams');
const realStreams = fs
  .readdirSync(streamsDir)
  .filter((f) => f.endsWith('.ssr'))
  .map((f) => path.join(streamsDir, f));

function regressionInputs(target: string): string[] {
  const dir = path.join(root, 'test/fixtures/fuzz', target);
  if (!fs.existsSync(dir)) return [];
  return fs
    .readdirSync(dir)
    .filter((f) => !f.startsWith('.') && f !== 'README.md')
    .map((f) => path.join(dir, f));
}

function runTarget(target: string, args: string[]) {
  return spawnSync(requireFile(nativeTargetPath(target)), ['-timeout=10', '-rss_limit_mb=2048', ...args], {
    encoding: 'utf8',
    env: { ...process.env, ASAN_OPTIONS: 'detect_leaks=1', UBSAN_OPTIONS: 'print_stacktrace=1:halt_on_error=1' },
  });
}

describe('native fuzz targets: the regression corpus', () => {
  for (const target of NATIVE_TARGETS) {
    const inputs = [...regressionInputs(target.name), ...(target.streamSeeds ? realStreams : [])];
    it(`${target.name}: ${inputs.length ? 'every kept input runs clean' : 'a short deterministic run is clean'} under ASan and UBSan`, () => {
      // With nothing to replay (the round trip's inputs are programs, not streams), a fixed-seed run from scratch.
      const r = runTarget(target.name, inputs.length ? inputs : ['-runs=3000', '-seed=1']);
      const report = r.stderr.slice(-6000);
      expect(r.status, report).toBe(0);
      if (inputs.length) {
        const ran = [...r.stderr.matchAll(/^Executed (.+) in \d+ ms$/gm)].map((m) => m[1]);
        expect(ran.sort(), report).toEqual([...inputs].sort());
      }
    });
  }
});

describe("npm run fuzz's seeds", () => {
  it('cuts a real stream into pieces of whole records behind its header, losing none', () => {
    const stream = fs.readFileSync(realStreams[0]!);
    const pieces = streamPieces(stream, 4096);
    expect(pieces.length).toBeGreaterThan(10);
    const header = stream.subarray(0, 64);
    const bodies: Buffer[] = [];
    for (const piece of pieces) {
      expect(piece.subarray(0, 64).equals(header)).toBe(true);
      // Whole records only: the sizes walk exactly to the piece's end.
      let at = 64;
      while (at < piece.length) at += piece.readUInt32LE(at + 4);
      expect(at).toBe(piece.length);
      bodies.push(piece.subarray(64));
    }
    expect(Buffer.concat(bodies).equals(stream.subarray(64))).toBe(true);
  });
});
