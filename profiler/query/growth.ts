// A recording that is still being written (store/writer.ts: a recorder on
// this host marked it and runs), as one reader's connection sees it grow.
// SQLite's `PRAGMA data_version` changes on this connection whenever
// another connection has committed: the recorder's ingest, one transaction
// per stream file and poll (record/recording-file.ts). Each change is a
// new `revision`: what the reader computed from the rows before it (the
// summary, loaded columns, analyses) is out of date. A finished recording
// never changes again, so it is checked no more once its writer's mark is
// gone (or its writer died).
import type { Database } from 'better-sqlite3';
import { readMeta } from '../store/database.ts';
import { writerAlive, writerOf, type Writer } from '../store/writer.ts';

export class Growth {
  readonly #db: Database;
  #writer: Writer | null;
  #following: boolean;
  #version: number;
  #revision = 0;

  constructor(db: Database) {
    this.#db = db;
    this.#writer = writerOf(readMeta(db));
    this.#following = this.#writer !== null && writerAlive(this.#writer);
    this.#version = this.#dataVersion();
  }

  /** The recording may still change: its writer runs. */
  get following(): boolean {
    return this.#following;
  }

  /** Changes seen since it was opened (including the last one: its writer finishing it). */
  get revision(): number {
    return this.#revision;
  }

  /**
   * Whether the file changed since the last call. Called inside the read
   * transaction of the caller's snapshot, so the answer is about what the
   * rest of the transaction reads. A change re-reads the writer's mark: the
   * recorder removes it with its last commit.
   */
  changed(): boolean {
    if (!this.#following) return false;
    const v = this.#dataVersion();
    if (v === this.#version) {
      // Nothing new: if the writer died meanwhile, nothing new ever comes. That end is a revision too, with no
      // new rows: what was answered from earlier ones while it grew (analyses are kept a while) is asked again.
      if (!writerAlive(this.#writer!)) {
        this.#following = false;
        this.#revision++;
      }
      return false;
    }
    this.#version = v;
    this.#revision++;
    this.#writer = writerOf(readMeta(this.#db));
    this.#following = this.#writer !== null && writerAlive(this.#writer);
    return true;
  }

  #dataVersion(): number {
    return this.#db.pragma('data_version', { simple: true }) as number;
  }
}
