// The bundled workload runner (native/workloads) as a record target.
import { runnerPath } from '../native/paths.ts';
import { SCENARIOS, WORKLOADS, type WorkloadSpec } from '../contract/record-request.ts';

export function workloadArgv(spec: WorkloadSpec): string[] {
  if (!(WORKLOADS as readonly string[]).includes(spec.workload)) {
    throw new Error(`unknown workload '${spec.workload}' (one of: ${WORKLOADS.join(', ')})`);
  }
  if (!(SCENARIOS as readonly string[]).includes(spec.scenario)) {
    throw new Error(`unknown scenario '${spec.scenario}' (one of: ${SCENARIOS.join(', ')})`);
  }
  const argv = [runnerPath(), '--workload', spec.workload, '--scenario', spec.scenario];
  for (const key of ['size', 'iterations', 'streams', 'chunks', 'variant'] as const) {
    const v = spec[key];
    if (v !== undefined) argv.push(`--${key}`, v);
  }
  return argv;
}
