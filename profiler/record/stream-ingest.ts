// Ingests the record-stream files that collectors write into one directory
// (one file per profiled process, `<pid>.ssr`) into a recording, while the
// target still runs and once more when it has ended.
import fs from 'node:fs';
import path from 'node:path';
import { Ingest, type IngestProgress } from '../native/addon.ts';
import { decodeHeader, StreamFormatError } from './decoder.ts';
import { FILE_HEADER_BYTES } from './format.ts';

export const STREAM_FILE_SUFFIX = '.ssr';

/**
 * How long a stream's commit may keep meeting readers' locks before the
 * ingest gives up on it. A commit waits for the readers' transactions under
 * way (the ingest's busy timeout, 5 s); one that waited longer is undone by
 * the ingest, its stream's state with it, and tried again: a reader that
 * holds the file for seconds delays the recording, it does not break it.
 */
export const LOCKED_GIVE_UP_MS = 120_000;
const LOCKED = /: database is locked\b/;

export interface DirectoryProgress {
  files: Map<string, IngestProgress>;
  records: number;
  originNs: bigint | null;
  originWallNs: bigint | null;
}

export class StreamDirectoryIngest {
  readonly #recording: string;
  readonly #sources: () => string[];
  #ingest: Ingest | null = null;
  #originNs: bigint | null = null;
  #originWallNs: bigint | null = null;
  readonly #files = new Map<string, IngestProgress>();
  /** Since when commits have kept meeting readers' locks (null: the last one went through). */
  #lockedSince: number | null = null;

  /**
   * @param recording an existing recording file (created by createRecording, closed)
   * @param sources the stream files to follow: a directory (every *.ssr in it, as they appear) or a fixed list
   */
  constructor(recording: string, sources: { directory: string } | { files: string[] }) {
    this.#recording = recording;
    this.#sources =
      'directory' in sources
        ? () =>
            fs
              .readdirSync(sources.directory)
              .filter((f) => f.endsWith(STREAM_FILE_SUFFIX))
              .sort()
              .map((f) => path.join(sources.directory, f))
        : () => sources.files;
  }

  /**
   * Ingests what has arrived. With `final`, the writers are done: a stream
   * cut short is reported (truncated) instead of waited for.
   */
  async poll(final = false): Promise<DirectoryProgress> {
    for (const file of this.#sources()) {
      if (!this.#ingest && !this.#open(file, final)) continue;
      for (;;) {
        try {
          this.#files.set(file, await this.#ingest!.ingestFile(file, { final }));
          this.#lockedSince = null;
          break;
        } catch (err) {
          const message = (err as Error).message;
          if (!LOCKED.test(message)) throw new StreamFormatError(file, message);
          this.#lockedSince ??= Date.now();
          if (Date.now() - this.#lockedSince > LOCKED_GIVE_UP_MS) {
            throw new StreamFormatError(file, `${message}: readers held the recording for over ${LOCKED_GIVE_UP_MS / 1000} s`);
          }
          // While the writers run, the next poll tries again; the last poll must get through.
          if (!final) break;
          await new Promise((r) => setTimeout(r, 100));
        }
      }
    }
    return this.progress();
  }

  progress(): DirectoryProgress {
    let records = 0;
    for (const p of this.#files.values()) records += p.records;
    return { files: this.#files, records, originNs: this.#originNs, originWallNs: this.#originWallNs };
  }

  /** @param finalSql index DDL to build before closing (see beginBulkLoad) */
  async finish(finalSql: string[] = []): Promise<void> {
    if (this.#ingest) await this.#ingest.finish({ finalSql });
    this.#ingest = null;
  }

  /**
   * The recording origin is the origin of the first stream seen (the first
   * process to initialise CUDA); other processes' times are rebased onto it.
   */
  #open(file: string, final: boolean): boolean {
    const fd = fs.openSync(file, 'r');
    const head = Buffer.alloc(FILE_HEADER_BYTES);
    const n = fs.readSync(fd, head, 0, FILE_HEADER_BYTES, 0);
    fs.closeSync(fd);
    if (n < FILE_HEADER_BYTES && !final) return false; // header not written yet
    const header = decodeHeader(head.subarray(0, n), file); // throws a clear error when cut short or foreign
    this.#originNs = header.origin_ns;
    this.#originWallNs = header.origin_wall_ns;
    this.#ingest = new Ingest(this.#recording, { originNs: header.origin_ns });
    return true;
  }
}
