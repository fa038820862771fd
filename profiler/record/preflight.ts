// Checks made before a target is started, so that a recording never starts
// when it cannot succeed, and every failure says what is wrong.
import fs from 'node:fs';
import path from 'node:path';
import { cuptiInfo, driver } from '../native/addon.ts';
import { collectorLibraryPath, cuptiLibraryPath, cuptiWatchLibraryPath, resolveExecutable } from '../native/paths.ts';
import { RecordError } from './record-error.ts';

/**
 * Oldest CUPTI the collector works with: the CUPTI_API_VERSION of the CUDA
 * 13.0 headers it is built against (the activity record structs it reads,
 * e.g. CUpti_ActivityKernel10, exist from this version on). The collector
 * checks the same again inside the target and reports a mismatch there.
 */
export const REQUIRED_CUPTI_VERSION = 130001;

export interface Preflight {
  executable: string;
  collector: string;
  /** The library preloaded to say when the target's own CUPTI client is refused (cupti-refusals.ts); null where it is not built. */
  cuptiWatch: string | null;
  cupti: string;
  cuptiVersion: number;
  driverVersion: number | null;
}

export function preflight(argv: string[], output: string, env: NodeJS.ProcessEnv): Preflight {
  if (argv.length === 0) throw new RecordError('nothing to record: give a command after `--` or a --workload', 2);
  const executable = resolveExecutable(argv[0]!, env.PATH);
  if (!executable) {
    const exists = argv[0]!.includes('/') && fs.existsSync(argv[0]!);
    throw new RecordError(exists ? `target is not executable: ${argv[0]}` : `target not found: ${argv[0]} (not a file, and not on PATH)`, 127);
  }

  const existing = env.CUDA_INJECTION64_PATH;
  const collector = collectorLibraryPath();
  if (existing && path.resolve(existing) !== path.resolve(collector)) {
    throw new RecordError(
      `another CUDA profiler is already injected into this environment (CUDA_INJECTION64_PATH=${existing}, e.g. Nsight Systems): only one CUPTI client can profile a process; run StreamScope outside it`,
    );
  }
  if (!fs.existsSync(collector)) {
    throw new RecordError(`StreamScope's collector is not built: ${collector} is missing (run \`npm run build:native\`)`);
  }

  checkWritable(output);

  // The driver only: the devices need cuInit (0.1-0.25 s), which the
  // recorder does while the target runs (recorder.ts); a machine whose
  // driver finds no device is said when nothing was recorded (finalize.ts).
  const found = driver();
  if (found.error !== null) throw new RecordError(`no GPU to record on: ${found.error}`);

  const cupti = cuptiLibraryPath();
  if (!cupti) throw new RecordError('CUPTI not found: install the CUDA toolkit (libcupti.so.13) or set STREAMSCOPE_CUPTI to its path');
  const info = cuptiInfo(cupti);
  if (info.error !== null || info.version === null) throw new RecordError(`CUPTI at ${cupti} cannot be used: ${info.error ?? 'no version'}`);
  if (info.version < REQUIRED_CUPTI_VERSION) {
    throw new RecordError(`CUPTI at ${cupti} is version ${info.version}, older than the ${REQUIRED_CUPTI_VERSION} StreamScope needs (CUDA 13.0 or newer)`);
  }

  const watch = cuptiWatchLibraryPath();
  return {
    executable,
    collector,
    cuptiWatch: fs.existsSync(watch) ? watch : null,
    cupti,
    cuptiVersion: info.version,
    driverVersion: found.driverVersion,
  };
}

export function checkWritable(output: string): void {
  const dir = path.dirname(path.resolve(output));
  if (!fs.existsSync(dir)) throw new RecordError(`cannot write ${output}: directory ${dir} does not exist`);
  try {
    fs.accessSync(dir, fs.constants.W_OK);
  } catch {
    throw new RecordError(`cannot write ${output}: directory ${dir} is not writable`);
  }
}
