// GNU time, which the benchmarks run each measured command under for its
// peak resident memory (Node gives no child's): `npm run bench` installs
// it (scripts/prerequisites.sh bench); a benchmark run directly on a
// machine without it says so before it starts, rather than failing on an
// empty answer.
import fs from 'node:fs';

export const GNU_TIME = '/usr/bin/time';

/** GNU_TIME, or an Error naming what is missing and how to get it. */
export function gnuTime(): string {
  if (!fs.existsSync(GNU_TIME))
    throw new Error(
      `${GNU_TIME} (GNU time) is missing: the benchmarks read each command's peak memory from it. npm run bench installs it; or: sudo apt-get install time`,
    );
  return GNU_TIME;
}
