// The next recordings read into the page cache while the workers summarize
// the current ones (issue 29: `summarize` of files not in the cache). A
// worker reads its file as the loader needs it, a page at a time, and waits
// on each read from the disk with its core idle: summarizing 64 ranks of
// 1 M operations from the disk took 22.6 s where it took 18.1 s from the
// cache, the reads added to the work instead of running beside it. Read
// ahead here, in order, a file at a time and in large reads (the disk's
// fastest way: 1.4 GB/s on the development VM, against ~0.3 s of work a
// file), the workers find their pages in the cache.
//
// Only a few files ahead of the workers: the files of a job may not all fit
// in memory, and a file read too early would be evicted again before its
// worker reads it. A file that cannot be read is passed over (its worker
// says what is wrong with it). Reading from the cache costs a copy (~15 ms
// for 90 MB), on a thread of libuv's pool.
import fs from 'node:fs/promises';

/** Bytes of one read: large, so that the disk streams. */
const READ_BYTES = 8 << 20;

export class ReadAhead {
  readonly #files: readonly string[];
  #allowed = 0;
  #stopped = false;
  #wake: (() => void) | null = null;
  readonly #done: Promise<void>;

  /** Reads `files` in order, each once it is allowed (allow). */
  constructor(files: readonly string[]) {
    this.#files = files;
    this.#done = this.#run();
  }

  /** Files before index `upTo` may be read now. */
  allow(upTo: number): void {
    if (upTo <= this.#allowed) return;
    this.#allowed = upTo;
    this.#wake?.();
  }

  /** Stops after the read under way. */
  async stop(): Promise<void> {
    this.#stopped = true;
    this.#wake?.();
    await this.#done;
  }

  async #run(): Promise<void> {
    const buffer = Buffer.allocUnsafe(READ_BYTES);
    for (let k = 0; k < this.#files.length; k++) {
      while (k >= this.#allowed && !this.#stopped) await new Promise<void>((resolve) => (this.#wake = resolve));
      this.#wake = null;
      if (this.#stopped) return;
      await readThrough(this.#files[k]!, buffer, () => this.#stopped);
    }
  }
}

/** Every byte of `file`, read and dropped (errors ignored). */
async function readThrough(file: string, buffer: Buffer, stopped: () => boolean): Promise<void> {
  let handle;
  try {
    handle = await fs.open(file, 'r');
    while (!stopped() && (await handle.read(buffer, 0, buffer.length, null)).bytesRead > 0);
  } catch {
    // The worker that summarizes it says why it cannot be read.
  } finally {
    await handle?.close();
  }
}
