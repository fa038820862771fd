// Every way a file given to the viewer can be wrong ends in an ApiError with
// the code the renderer shows a distinct message for, naming the file.
import fs from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';
import { RecordingQuery } from '../../profiler/query/recording-query.ts';
import { tempDir } from '../helpers/native.ts';

const fixture = path.resolve(import.meta.dirname, '../fixtures/recordings/normalise-concurrent.sqlite');
const dir = tempDir('query-errors');
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

function copy(name: string): string {
  const f = path.join(dir, name);
  fs.copyFileSync(fixture, f);
  return f;
}

function openError(file: string): { code: string; message: string; file?: string } {
  try {
    new RecordingQuery('x', file).close();
  } catch (err) {
    return err as { code: string; message: string; file?: string };
  }
  throw new Error(`${file} opened`);
}

describe('opening a bad file', () => {
  it('missing', () => {
    const f = path.join(dir, 'missing.sqlite');
    expect(openError(f)).toMatchObject({ code: 'not-found', file: f, message: expect.stringContaining(f) });
  });

  it('not SQLite at all', () => {
    const f = path.join(dir, 'notes.sqlite');
    fs.writeFileSync(f, 'this is not a database, just some text that is long enough to have a header\n'.repeat(20));
    expect(openError(f)).toMatchObject({ code: 'not-a-recording', file: f, message: expect.stringMatching(/not a SQLite database/) });
  });

  it('SQLite, but not a StreamScope recording', () => {
    const f = path.join(dir, 'other.sqlite');
    const db = new Database(f);
    db.exec('CREATE TABLE t (x); INSERT INTO t VALUES (1)');
    db.close();
    expect(openError(f)).toMatchObject({ code: 'not-a-recording', file: f, message: expect.stringMatching(/not a StreamScope recording/) });
  });

  it('truncated (a copy cut short)', () => {
    const f = path.join(dir, 'truncated.sqlite');
    const bytes = fs.readFileSync(fixture);
    fs.writeFileSync(f, bytes.subarray(0, bytes.length / 2));
    expect(openError(f)).toMatchObject({ code: 'corrupt', file: f, message: expect.stringMatching(/truncated/) });
  });

  it('written by a newer StreamScope', () => {
    const f = copy('newer.sqlite');
    const db = new Database(f);
    db.pragma('user_version = 99');
    db.close();
    const before = fs.readFileSync(f);
    expect(openError(f)).toMatchObject({ code: 'newer-schema', file: f, message: expect.stringMatching(/newer StreamScope/) });
    expect(fs.readFileSync(f).equals(before)).toBe(true); // never modified
  });

  it('locked by a writer', () => {
    const f = copy('locked.sqlite');
    const writer = new Database(f);
    writer.exec('BEGIN EXCLUSIVE');
    try {
      // Reported after a second (open-read-only.ts), not better-sqlite3's 5 s busy timeout.
      expect(openError(f)).toMatchObject({ code: 'locked', file: f, message: expect.stringMatching(/locked/) });
    } finally {
      writer.exec('ROLLBACK');
      writer.close();
    }
  });
});

describe('a file that goes bad while open', () => {
  it('queries answer corrupt, naming the file, instead of crashing', () => {
    const f = copy('shrinks.sqlite');
    const q = new RecordingQuery('y', f);
    try {
      fs.truncateSync(f, 8192);
      const s = () => q.stats();
      expect(s).toThrow(expect.objectContaining({ code: 'corrupt', file: f }));
      expect(() => q.window({ rows: q.summary().streams.map((x) => x.rowId), startNs: 0, endNs: 1e12, resolutionNs: 1 })).toThrow(
        expect.objectContaining({ code: 'corrupt', file: f }),
      );
    } finally {
      q.close();
    }
  });
});
