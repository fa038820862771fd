// Where the native build products are. In a source checkout they sit under
// native/ (built by `npm run build:native`); a packaged app or an unusual
// layout points at them with environment variables.
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');

function firstExisting(candidates: (string | undefined)[]): string | null {
  for (const c of candidates) if (c && fs.existsSync(c)) return c;
  return null;
}

export function collectorLibraryPath(): string {
  return process.env.STREAMSCOPE_COLLECTOR ?? path.join(repoRoot, 'native/build/collector/libstreamscope_collector.so');
}

/**
 * The library the recorder preloads into the target beside the collector
 * (native/collector/cupti_watch.cc): it notes a CUPTI client of the
 * target's own that is refused the subscription. Built and packed next to
 * the collector.
 */
export function cuptiWatchLibraryPath(): string {
  return path.join(path.dirname(collectorLibraryPath()), 'libstreamscope_cupti_watch.so');
}

export function runnerPath(): string {
  return process.env.STREAMSCOPE_RUNNER ?? path.join(repoRoot, 'native/build/workloads/streamscope-runner');
}

export function syntheticStreamToolPath(): string {
  return path.join(repoRoot, 'native/build/collector/streamscope-synthetic-stream');
}

/**
 * The toolkit's libcupti, whose version the recorder checks before it
 * starts a target. The collector itself finds libcupti through its RUNPATH
 * (or binds to the copy the target already loaded), and is NVTX's injection
 * library too (native/collector/nvtx_forward.cc).
 */
export function cuptiLibraryPath(): string | null {
  const cudaHome = process.env.CUDA_HOME ?? '/usr/local/cuda';
  return firstExisting([
    process.env.STREAMSCOPE_CUPTI,
    path.join(cudaHome, 'targets/x86_64-linux/lib/libcupti.so.13'),
    path.join(cudaHome, 'extras/CUPTI/lib64/libcupti.so.13'),
    path.join(cudaHome, 'lib64/libcupti.so.13'),
  ]);
}

/** Resolves a command the way a shell would (PATH search), or null. */
export function resolveExecutable(command: string, envPath = process.env.PATH ?? ''): string | null {
  const isExec = (p: string) => {
    try {
      const st = fs.statSync(p);
      if (!st.isFile()) return false;
      fs.accessSync(p, fs.constants.X_OK);
      return true;
    } catch {
      return false;
    }
  };
  if (command.includes('/')) return isExec(command) ? path.resolve(command) : null;
  for (const dir of envPath.split(':')) {
    if (!dir) continue;
    const p = path.join(dir, command);
    if (isExec(p)) return p;
  }
  return null;
}
