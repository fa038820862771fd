// The recordings open in one session of the desktop app (its query worker)
// or of the server, by id. Ids are random, so a page cannot guess the id of
// a recording it was not given, and stable while the file stays open.
//
// The recent-files list (File ▸ Open Recent) is app/recent-files.ts: only
// the desktop app has one; browser mode never lists local paths.
import crypto from 'node:crypto';
import path from 'node:path';
import { ApiError } from './api-error.ts';
import type { RecordingHandle } from './api.ts';
import { RecordingQuery } from './recording-query.ts';

export class SessionRegistry {
  readonly #open = new Map<string, RecordingQuery>();

  /**
   * Opens `file` read-only (or returns the handle it already has: opening
   * the same file twice shows one recording). Throws an ApiError with the
   * file's problem (not-found, not-a-recording, corrupt, locked, newer-schema).
   */
  open(file: string): RecordingHandle {
    const abs = path.resolve(file);
    for (const q of this.#open.values()) if (q.path === abs) return handleOf(q);
    const id = crypto.randomBytes(8).toString('hex');
    const q = new RecordingQuery(id, abs);
    this.#open.set(id, q);
    return handleOf(q);
  }

  list(): RecordingHandle[] {
    return [...this.#open.values()].map(handleOf);
  }

  /** The open recording with this id; 'not-found' for any other. */
  get(id: string): RecordingQuery {
    const q = this.#open.get(id);
    if (!q) throw new ApiError('not-found', `no open recording with id '${String(id).slice(0, 64)}'`);
    return q;
  }

  close(id: string): void {
    this.#open.get(id)?.close();
    this.#open.delete(id);
  }

  closeAll(): void {
    for (const q of this.#open.values()) q.close();
    this.#open.clear();
  }
}

function handleOf(q: RecordingQuery): RecordingHandle {
  return { recordingId: q.recordingId, name: path.basename(q.path), path: q.path };
}
