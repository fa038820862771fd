// One source for each vocabulary (issue 12): a list that several parts of
// the code must agree on is written once, and the others take it from
// there. These tests fail when a second copy appears or when the one
// definition no longer matches what it names.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ITEM_TABLES } from '../../profiler/contract/api.ts';
import { FIX_IDS, type Finding } from '../../profiler/contract/findings.ts';
import { analyze } from '../../profiler/analysis/diagnosis/analyze.ts';
import { fixForFamily, fixLabel } from '../../profiler/analysis/replay/whatif.ts';
import { createRecording, openRecording } from '../../profiler/store/database.ts';
import { ZONED_TABLES } from '../../profiler/store/zone-tables.ts';
import { repoRoot } from '../../scripts/check-imports.ts';
import { VERSION } from '../../profiler/contract/version.ts';
import { decodeStream } from '../../profiler/record/decoder.ts';
import { syntheticStream, tempDir } from '../helpers/native.ts';

/** The TypeScript sources of the product (not tests, not build output), relative to the root. */
function sources(): string[] {
  const out: string[] = [];
  const walk = (dir: string) => {
    for (const e of fs.readdirSync(path.join(repoRoot, dir), { withFileTypes: true })) {
      if (e.name === 'node_modules' || e.name === 'dist' || e.name === 'build') continue;
      const rel = `${dir}/${e.name}`;
      if (e.isDirectory()) walk(rel);
      else if (/\.tsx?$/.test(e.name) && !/\.test\.tsx?$/.test(e.name)) out.push(rel);
    }
  };
  for (const top of ['profiler', 'app', 'renderer/src', 'scripts']) walk(top);
  return out;
}

/**
 * Files that write `words` out as a list: string literals separated by
 * commas or `|` (an array or a union type), naming exactly these words in
 * any order.
 */
function filesListing(words: readonly string[]): string[] {
  const want = [...words].sort().join(' ');
  // Between the words: a comma or '|', blanks, and comments.
  const gap = String.raw`(?:\s|//[^\n]*\n|/\*[\s\S]*?\*/)*`;
  const list = new RegExp(String.raw`(?:(['"])[\w.-]+\1${gap}[,|]${gap})+(['"])[\w.-]+\2`, 'g');
  return sources().filter((rel) => {
    const text = fs.readFileSync(path.join(repoRoot, rel), 'utf8');
    for (const m of text.matchAll(list)) {
      const names = [...m[0].matchAll(/['"]([\w.-]+)['"]/g)].map((x) => x[1]!);
      if ([...new Set(names)].sort().join(' ') === want) return true;
    }
    return false;
  });
}

describe('item tables', () => {
  it('are listed once, in the contract (items.ts, ITEM_TABLES); the type, the checks and the zones take them from there', () => {
    expect(filesListing(ITEM_TABLES)).toEqual(['profiler/contract/items.ts']);
  });

  it('each is a table of a recording, with ids and start times, and is zoned', () => {
    const dir = tempDir('vocabularies');
    const db = createRecording(path.join(dir, 'r.sqlite'));
    try {
      for (const table of ITEM_TABLES) {
        const columns = (db.prepare(`SELECT name FROM pragma_table_info(?)`).all(table) as { name: string }[]).map((c) => c.name);
        expect(columns, table).toEqual(expect.arrayContaining(['id', 'start_ns']));
      }
      expect(Object.keys(ZONED_TABLES).sort()).toEqual([...ITEM_TABLES].sort());
    } finally {
      db.close();
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('fix ids', () => {
  it('are listed once, in the contract (FIX_IDS); the what-if replay and the findings use those ids', () => {
    expect(filesListing(FIX_IDS)).toEqual(['profiler/contract/findings.ts']);
  });

  it('each family of host-blocking calls has its own fix, and no other family has one', () => {
    const blocking = ['sync', 'alloc', 'pinned-alloc', 'register'] as const;
    const fixes = blocking.map((f) => fixForFamily(f));
    expect(new Set(fixes).size).toBe(blocking.length);
    for (const fix of fixes) expect(FIX_IDS).toContain(fix);
    for (const other of ['module-load', 'function-lookup', 'context', 'other'] as const) expect(fixForFamily(other)).toBeUndefined();
  });

  it('a finding names the fix for its cause, and its what-if is the estimate of that fix (chosen by id, whatever the title says)', () => {
    const fixtures = path.resolve(import.meta.dirname, '../fixtures');
    const seen = new Set<string>();
    for (const name of [
      'recordings/normalise-default-stream',
      'recordings/normalise-pageable',
      'recordings/normalise-sync-each',
      'recordings/numba_pinned_loop',
      'recordings/cupy_streams',
      'recordings/nccl-1gpu-serial',
      // The corpus's mistakes whose fixes no recording above needs: a readback per step, launches a graph would take, one stream.
      'corpus/torch-item-per-step/bug',
      'corpus/torch-launch-bound-graphs/bug',
      'corpus/runner-serial/bug',
    ]) {
      const db = openRecording(path.join(fixtures, `${name}.sqlite`), { readonly: true });
      let findings: Finding[];
      try {
        findings = analyze(db).diagnosis.findings;
      } finally {
        db.close();
      }
      for (const f of findings) {
        const fixable = (
          [
            'legacy-default-stream',
            'pageable-async-copy',
            'blocking-readback',
            'host-blocking-call',
            'serialized-collective',
            'single-stream',
            'launch-bound',
          ] as string[]
        ).includes(f.kind);
        expect(f.fixId !== undefined, `${name}: ${f.kind}`).toBe(fixable);
        if (f.whatIf) expect(f.whatIf.fix, `${name}: ${f.title}`).toBe(fixLabel(f.fixId!));
        if (f.fixId && f.whatIf) seen.add(f.fixId);
      }
    }
    // Every fix is some real recording's (the NCCL one has pinned allocations between launches too).
    expect([...seen].sort()).toEqual([...FIX_IDS].sort());
  });
});

describe('Content-Security-Policy', () => {
  it('is written once (contract/content-security-policy.ts); the app protocol and browser mode both send it', () => {
    const writers = sources().filter((rel) => /['"`]default-src /.test(fs.readFileSync(path.join(repoRoot, rel), 'utf8')));
    expect(writers).toEqual(['profiler/contract/content-security-policy.ts']);
  });
});

describe('the version', () => {
  const packageVersion = (JSON.parse(fs.readFileSync(path.join(repoRoot, 'package.json'), 'utf8')) as { version: string }).version;

  it("is package.json's: the CLI, the recordings and the API read it from there (contract/version.ts)", () => {
    expect(VERSION).toBe(packageVersion);
    const cli = execFileSync(process.execPath, [path.join(repoRoot, 'profiler/cli/streamscope.ts'), '--version'], { encoding: 'utf8' });
    expect(cli.trim()).toBe(packageVersion);
  });

  it('is written nowhere else in the sources', () => {
    const quoted = new RegExp(`['"\`]${packageVersion.replace(/\./g, '\\.')}['"\`]`);
    expect(sources().filter((rel) => quoted.test(fs.readFileSync(path.join(repoRoot, rel), 'utf8')))).toEqual([]);
  });

  it('is what the collector stamps into its record streams (native/CMakeLists.txt reads package.json)', () => {
    const dir = tempDir('version');
    try {
      const { stream } = syntheticStream(dir, 'version');
      const { header } = decodeStream(new Uint8Array(fs.readFileSync(stream)), stream);
      const [major, minor, patch] = packageVersion.split('.').map(Number) as [number, number, number];
      expect(header.collector_version).toBe(major * 10000 + minor * 100 + patch);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
