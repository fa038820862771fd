// The scope flags every command that analyses takes (report, check, diff):
//   (none)             the steady state: start-up left out
//   --whole            the whole recording, start-up included
//   --range NAME[#k]   the GPU work launched inside an NVTX range (all its instances, or the k-th from 1)
//   --from T --to T    a time range from the recording's origin (either may be left out)
// Times take a unit: 1.5s, 350ms, 20us (or µs), 1000ns; a bare number is seconds.
// The flags are declared with the commands (commands.ts SCOPE_OPTIONS); a
// contradiction or a malformed value is a UsageError of the command.
import { parseRangeScope, ScopeError } from '../analysis/scope.ts';
import { STEADY_STATE, type Scope } from '../contract/scope.ts';
import { UsageError } from './usage.ts';

export interface ScopeValues {
  whole?: boolean;
  range?: string;
  from?: string;
  to?: string;
}

const UNIT: Record<string, number> = { s: 1e9, ms: 1e6, us: 1e3, µs: 1e3, ns: 1 };

/** `1.5s`, `350ms`, `20us`, `1000ns`, or a bare number of seconds, as ns. */
export function parseTime(text: string, flag: string): number {
  const m = /^\s*(-?\d+(?:\.\d+)?(?:e[+-]?\d+)?)\s*(s|ms|us|µs|ns)?\s*$/i.exec(text);
  if (!m) throw new UsageError(`${flag}: expected a time such as 1.5s, 350ms, 20us or 1000ns, got '${text}'`);
  return Math.round(Number(m[1]) * UNIT[(m[2] ?? 's').toLowerCase()]!);
}

/** The scope the flags ask for; UsageError for a contradiction or a malformed value. */
export function scopeFromArgs(values: ScopeValues): Scope {
  const given = [
    values.whole ? '--whole' : null,
    values.range !== undefined ? '--range' : null,
    values.from !== undefined || values.to !== undefined ? '--from/--to' : null,
  ].filter(Boolean);
  if (given.length > 1) throw new UsageError(`give one scope, not ${given.join(' and ')}`);
  if (values.whole) return { kind: 'whole' };
  if (values.range !== undefined) {
    try {
      return parseRangeScope(values.range);
    } catch (err) {
      if (err instanceof ScopeError) throw new UsageError(err.message);
      throw err;
    }
  }
  if (values.from !== undefined || values.to !== undefined) {
    const startNs = values.from !== undefined ? parseTime(values.from, '--from') : -Number.MAX_SAFE_INTEGER;
    const endNs = values.to !== undefined ? parseTime(values.to, '--to') : Number.MAX_SAFE_INTEGER;
    if (endNs <= startNs) throw new UsageError(`--from ${values.from} --to ${values.to}: the end must come after the start`);
    return { kind: 'window', startNs, endNs };
  }
  return STEADY_STATE;
}
