// `record -o` placeholders, so that the launcher a job already uses can
// start one recorder per node or per rank, each writing a file of its own:
//
//   %h  this machine's host name         %r  the rank (from the launcher's variables)
//   %p  the recorder's process id        %l  the local rank (the rank on this node)
//   %%  a literal %
//
// %r and %l come from the recorder's own environment, read as the
// collector's variables are read in a recording (profiler/contract/ranks.ts):
// under `torchrun --no-python streamscope record …`, `mpirun … streamscope
// record …` or `srun streamscope record …` the recorder is itself a rank.
import os from 'node:os';
import { RANK_LAUNCHERS, rankFromEnv } from '../contract/ranks.ts';
import { RecordError } from './record-error.ts';

export interface OutputNameContext {
  env: Readonly<Record<string, string | undefined>>;
  hostname: string;
  pid: number;
}

const PLACEHOLDERS = '%h host name, %p pid, %r rank, %l local rank, %% a literal %';

/** Each launcher's rank variable with its name, for the message of a %r that cannot be filled: "RANK (torchrun), …". */
function launcherVariables(which: 'rank' | 'localRank'): string {
  return RANK_LAUNCHERS.filter((l) => l[which] !== null)
    .map((l) => `${l[which]} (${l.launcher})`)
    .join(', ');
}

/**
 * The output path with its placeholders filled. A placeholder that cannot be
 * filled (%r outside a launcher, an unknown %x, a lone % at the end) is a
 * usage error (RecordError, exit code 2) that says what is missing.
 */
export function expandOutputName(template: string, ctx: OutputNameContext = { env: process.env, hostname: os.hostname(), pid: process.pid }): string {
  if (!template.includes('%')) return template;
  const rank = rankFromEnv(ctx.env);
  const usage = (why: string): never => {
    throw new RecordError(`-o ${template}: ${why}`, 2);
  };
  return template.replace(/%(.?)/gs, (_match, c: string) => {
    switch (c) {
      case '%':
        return '%';
      case 'h':
        return ctx.hostname;
      case 'p':
        return String(ctx.pid);
      case 'r':
        if (rank.rank === null) {
          return usage(`%r is this process's rank, but no launcher set one: none of ${launcherVariables('rank')} holds a number here`);
        }
        return String(rank.rank);
      case 'l':
        if (rank.localRank === null) {
          return usage(
            rank.rank === null
              ? `%l is this process's rank on its node, but no launcher set one: none of ${launcherVariables('localRank')} holds a number here`
              : `%l is this process's rank on its node, but its launcher (${rank.rankVariable}=${rank.rank}) set no local rank`,
          );
        }
        return String(rank.localRank);
      case '':
        return usage(`a lone % at the end (write %% for a literal %; placeholders: ${PLACEHOLDERS})`);
      default:
        return usage(`unknown placeholder %${c} (placeholders: ${PLACEHOLDERS})`);
    }
  });
}
