// Reads from the disk rather than from memory, for the benchmarks that
// measure a cold start: the whole page cache dropped, or one file's pages.
import { execFileSync, spawnSync } from 'node:child_process';
import fs from 'node:fs';

/** Empties the page cache (as root), so that the next read comes from the disk. */
export function dropCaches(): void {
  spawnSync('sync');
  fs.writeFileSync('/proc/sys/vm/drop_caches', '3');
}

/**
 * Takes one file's pages out of the page cache (written back first: dirty
 * pages stay), so that the next read of it comes from the disk. Only its
 * own: on a machine shared with other benchmarks, dropping the whole cache
 * would slow theirs, and would make this one's cold start pay for reading
 * Node and the sources again as well. Through dd's nocache flag
 * (posix_fadvise DONTNEED on the whole file), any user.
 */
export function evictFromPageCache(file: string): void {
  const fd = fs.openSync(file, 'r+');
  try {
    fs.fsyncSync(fd);
  } finally {
    fs.closeSync(fd);
  }
  execFileSync('dd', [`if=${file}`, 'iflag=nocache', 'count=0', 'status=none']);
}
