// The recordings open in one session of the app or the server, by id.
import crypto from 'node:crypto';
import path from 'node:path';
import type { RecordingHandle } from './api.ts';
import { ApiError, RecordingQuery } from './recording-query.ts';

export class SessionRegistry {
  readonly #open = new Map<string, RecordingQuery>();

  /** Opens `file` (or returns the handle it already has). Throws ApiError with the file's problem. */
  open(file: string): RecordingHandle {
    const abs = path.resolve(file);
    for (const q of this.#open.values()) if (q.path === abs) return handleOf(q);
    const id = crypto.randomBytes(6).toString('hex');
    const q = new RecordingQuery(id, abs);
    this.#open.set(id, q);
    return handleOf(q);
  }

  list(): RecordingHandle[] {
    return [...this.#open.values()].map(handleOf);
  }

  get(id: string): RecordingQuery {
    const q = this.#open.get(id);
    if (!q) throw new ApiError('not-found', `no open recording with id '${id}'`);
    return q;
  }

  closeAll(): void {
    for (const q of this.#open.values()) q.close();
    this.#open.clear();
  }
}

function handleOf(q: RecordingQuery): RecordingHandle {
  return { recordingId: q.recordingId, name: path.basename(q.path), path: q.path };
}
