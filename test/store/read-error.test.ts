// store/read-error.ts: an error met reading a recording that opened is
// said about the file only when the file is at fault — never on a file as
// StreamScope writes it — and database.ts's row-id check at open.
import fs from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';
import { openRecording } from '../../profiler/store/database.ts';
import { contentProblem, recordingReadError } from '../../profiler/store/read-error.ts';
import { RecordingFileError } from '../../profiler/store/recording-error.ts';
import { tempDir } from '../helpers/native.ts';

const fixtures = path.resolve(import.meta.dirname, '../fixtures/recordings');
const dir = tempDir('read-error');
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

/** A copy of a fixture, changed by `sql` (foreign keys off: a table others name may go). */
function changed(name: string, sql: string): string {
  const file = path.join(dir, `${name}-${fs.readdirSync(dir).length}.sqlite`);
  fs.copyFileSync(path.join(fixtures, `${name}.sqlite`), file);
  const db = new Database(file);
  db.pragma('foreign_keys = OFF');
  db.exec(sql);
  db.close();
  return file;
}

describe('contentProblem', () => {
  it('finds nothing wrong in any recording StreamScope wrote', () => {
    for (const f of fs.readdirSync(fixtures).filter((n) => n.endsWith('.sqlite'))) {
      const db = new Database(path.join(fixtures, f), { readonly: true });
      try {
        expect(contentProblem(db), f).toBeNull();
      } finally {
        db.close();
      }
    }
  });

  it('names a table or column missing, and a value of the wrong type', () => {
    const problem = (file: string) => {
      const db = new Database(file, { readonly: true });
      try {
        return contentProblem(db);
      } finally {
        db.close();
      }
    };
    expect(problem(changed('normalise-concurrent', 'DROP TABLE cuda_events'))).toBe("not a StreamScope recording as written: it has no table 'cuda_events'");
    expect(problem(changed('normalise-concurrent', 'DROP TABLE streams; CREATE VIEW streams AS SELECT 1 AS x'))).toMatch(/'streams' is a view/);
    expect(problem(changed('normalise-concurrent', 'ALTER TABLE nvtx_ranges RENAME COLUMN end_ns TO e'))).toMatch(/table 'nvtx_ranges' has no column 'end_ns'/);
    expect(problem(changed('normalise-concurrent', "UPDATE kernels SET start_ns = 'soon' WHERE id = 3"))).toMatch(
      /kernels row 3: start_ns holds the text 'soon', not an integer/,
    );
    expect(problem(changed('normalise-concurrent', 'UPDATE api_calls SET end_ns = 0.5 WHERE id = 3'))).toMatch(
      /api_calls row 3: end_ns holds the real 0\.5, not an integer/,
    );
    // A table without rowids names its row by its key.
    expect(problem(changed('normalise-concurrent', "UPDATE threads SET name = x'00ff' WHERE tid = tid"))).toMatch(
      /threads row \(pid 737, tid 737\): name holds a blob of 2 bytes, not a text/,
    );
  });
});

describe('recordingReadError', () => {
  const file = path.join(fixtures, 'normalise-concurrent.sqlite');

  it('says SQLite finding a page corrupt, as openRecording says it', () => {
    const err = Object.assign(new Error('database disk image is malformed'), { code: 'SQLITE_CORRUPT' });
    expect(recordingReadError(file, err)?.message).toBe(`${file}: database is corrupt or truncated: database disk image is malformed`);
    // The native addon's messages carry the file and no code.
    expect(recordingReadError(file, new Error(`${file}: database disk image is malformed`))?.problem).toBe(
      'database is corrupt or truncated: database disk image is malformed',
    );
  });

  it('leaves an error on a file as StreamScope writes it to its reader (a bug, not a bad file)', () => {
    expect(recordingReadError(file, new TypeError("Cannot read properties of undefined (reading 'x')"))).toBeNull();
  });

  it('says what the file lacks when a reader trips on it', () => {
    const bad = changed('normalise-concurrent', 'ALTER TABLE processes DROP COLUMN complete');
    const err = recordingReadError(bad, Object.assign(new Error('no such column: complete'), { code: 'SQLITE_ERROR' }));
    expect(err).toBeInstanceOf(RecordingFileError);
    expect(err?.message).toBe(`${bad}: not a StreamScope recording as written: table 'processes' has no column 'complete'`);
  });
});

describe('openRecording', () => {
  it('refuses a row id StreamScope never writes, naming it exactly', () => {
    const negative = changed('normalise-concurrent', 'UPDATE api_calls SET id = -4385761328248203520 WHERE id = 5');
    expect(() => openRecording(negative, { readonly: true })).toThrow(
      `${negative}: not a StreamScope recording as written: api_calls.id -4385761328248203520 is not a row id StreamScope writes (1 to 68719476735)`,
    );
    const zero = changed('normalise-concurrent', 'UPDATE streams SET id = 0 WHERE id = (SELECT min(id) FROM streams)');
    expect(() => openRecording(zero, { readonly: true })).toThrow(/streams\.id 0 is not a row id/);
  });

  it('says a schema older than its user_version claims cannot be migrated, about the file', () => {
    const lowered = changed('normalise-concurrent', 'PRAGMA user_version = 7');
    expect(() => openRecording(lowered, { readonly: true })).toThrow(
      new RegExp(`^${lowered}: cannot migrate to schema version 8: duplicate column name: \\w+$`),
    );
  });
});
