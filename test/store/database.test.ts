import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createRecording, openRecording, readMeta, writeMeta } from '../../profiler/store/database.ts';
import { latestSchemaVersion, migrations } from '../../profiler/store/migrations/index.ts';

let dir: string;
beforeEach(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ss-store-'));
});
afterEach(() => {
  fs.rmSync(dir, { recursive: true, force: true });
});

describe('recording files', () => {
  it('creates a recording at the latest schema and reopens it', () => {
    const file = path.join(dir, 'a.sqlite');
    const db = createRecording(file);
    writeMeta(db, { origin_ns: '1763800000000000123', complete: true });
    db.close();
    const again = openRecording(file, { readonly: true });
    expect(again.pragma('user_version', { simple: true })).toBe(latestSchemaVersion);
    expect(readMeta(again).get('origin_ns')).toBe('1763800000000000123');
    expect(readMeta(again).get('complete')).toBe('1');
    expect(again.pragma('journal_mode', { simple: true })).toBe('delete');
    again.close();
  });

  it('never overwrites an existing file unless asked', () => {
    const file = path.join(dir, 'a.sqlite');
    createRecording(file).close();
    expect(() => createRecording(file)).toThrow(`${file}: already exists`);
    createRecording(file, { overwrite: true }).close();
  });

  it('refuses a file that is not SQLite, naming the file', () => {
    const file = path.join(dir, 'notes.txt');
    fs.writeFileSync(file, 'hello, this is not a database at all'.repeat(200));
    expect(() => openRecording(file)).toThrow(`${file}: not a SQLite database`);
  });

  it('refuses an empty and a missing file', () => {
    const file = path.join(dir, 'empty.sqlite');
    fs.writeFileSync(file, '');
    expect(() => openRecording(file)).toThrow(`${file}: empty file`);
    expect(() => openRecording(path.join(dir, 'nope.sqlite'))).toThrow('no such file');
  });

  it('refuses a SQLite database that is not a recording', () => {
    const file = path.join(dir, 'other.sqlite');
    const db = new Database(file);
    db.exec('CREATE TABLE t (x)');
    db.close();
    expect(() => openRecording(file)).toThrow('not a StreamScope recording');
  });

  it('refuses a recording from a newer schema and leaves it untouched', () => {
    const file = path.join(dir, 'future.sqlite');
    const db = createRecording(file);
    db.pragma(`user_version = ${latestSchemaVersion + 1}`);
    db.close();
    const before = fs.readFileSync(file);
    expect(() => openRecording(file)).toThrow(`newer StreamScope (schema version ${latestSchemaVersion + 1}`);
    expect(fs.readFileSync(file).equals(before)).toBe(true);
  });

  it('refuses a truncated database', () => {
    const file = path.join(dir, 'cut.sqlite');
    const db = createRecording(file);
    const ins = db.prepare('INSERT INTO strings (value) VALUES (?)');
    db.transaction(() => {
      for (let i = 0; i < 20000; i++) ins.run(`kernel_name_${i}_${'x'.repeat(40)}`);
    })();
    db.close();
    const full = fs.readFileSync(file);
    fs.writeFileSync(file, full.subarray(0, Math.floor(full.length / 3)));
    expect(() => {
      const d = openRecording(file, { readonly: true });
      try {
        d.prepare('SELECT count(*) FROM strings').get();
      } finally {
        d.close();
      }
    }).toThrow(file);
  });

  it('migrates a version-1 recording to the latest schema, keeping its rows (also when opened to read); a read-only file is refused with the reason', () => {
    const file = path.join(dir, 'v1.sqlite');
    const db = new Database(file);
    db.exec(migrations[0]!.sql);
    db.pragma('user_version = 1');
    db.prepare("INSERT INTO meta (key, value) VALUES ('format', 'streamscope-recording')").run();
    db.prepare('INSERT INTO contexts (pid, cupti_context_id) VALUES (1, 1)').run();
    db.prepare('INSERT INTO streams (pid, context_id, cupti_stream_id, flags) VALUES (1, 1, 13, 2)').run();
    db.close();
    const readOnlyCopy = path.join(dir, 'v1-readonly.sqlite');
    fs.copyFileSync(file, readOnlyCopy);
    fs.chmodSync(readOnlyCopy, 0o444);
    if (process.getuid?.() !== 0) {
      // (root may write anyway, so the refusal is only checked for other users)
      expect(() => openRecording(readOnlyCopy, { readonly: true })).toThrow(
        `${readOnlyCopy}: schema version 1 needs migrating to ${latestSchemaVersion}, and the file is not writable`,
      );
    }
    const reading = openRecording(file, { readonly: true });
    expect(reading.pragma('user_version', { simple: true })).toBe(latestSchemaVersion);
    reading.close();
    const migrated = openRecording(file);
    expect(migrated.pragma('user_version', { simple: true })).toBe(latestSchemaVersion);
    expect(migrated.prepare('SELECT cupti_stream_id, flags, created_by_correlation_id FROM streams').all()).toEqual([
      { cupti_stream_id: 13, flags: 2, created_by_correlation_id: null },
    ]);
    migrated.close();
  });

  it('has increasing migration versions, each applied in order', () => {
    migrations.forEach((m, i) => expect(m.version).toBe(i + 1));
  });
});
