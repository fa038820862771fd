// StreamScope's cache directory, whose folders hold what it derives from
// recordings and can make again (merged jobs: merge/job-cache.ts; column
// cache entries: analysis/load/column-cache.ts), never beside the user's
// files.
import os from 'node:os';
import path from 'node:path';

/** $STREAMSCOPE_CACHE_DIR, else the XDG cache directory's streamscope ($XDG_CACHE_HOME where absolute, else ~/.cache). */
export function cacheDir(env: NodeJS.ProcessEnv = process.env): string {
  if (env.STREAMSCOPE_CACHE_DIR) return env.STREAMSCOPE_CACHE_DIR;
  const base = env.XDG_CACHE_HOME && path.isAbsolute(env.XDG_CACHE_HOME) ? env.XDG_CACHE_HOME : path.join(os.homedir(), '.cache');
  return path.join(base, 'streamscope');
}
