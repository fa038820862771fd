#!/usr/bin/env node
// The `streamscope` command line. Each subcommand is a thin layer over the
// profiler library: parse arguments, call, print, choose the exit code.
import { exitWorkFinished } from '../base/before-exit.ts';
import { VERSION } from '../contract/version.ts';
import { COMMANDS, isCommand, type CommandName } from './commands.ts';
import { fail, failure } from './common.ts';
import { commandHelp, commandsHelp, didYouMean, UsageError, usageErrorText, wantsHelp } from './usage.ts';

/**
 * A command whose process ends when its work does (an analysis, a summary,
 * an export): its heap keeps the memory it frees for its next arrays
 * (native/addon/src/memory_policy.cc: the 10 M-operation analysis 3.7 →
 * 3.3 s, its peak memory 2.9 → 3.6 GB). Not the server, the app or record:
 * they run on and give memory back. Where the addon cannot load, the
 * command says so itself.
 */
async function oneShot<M>(command: Promise<M>): Promise<M> {
  const [module, addon] = await Promise.all([command, import('../native/addon.ts')]);
  try {
    addon.keepFreedMemory();
  } catch {
    // the command reports the addon's absence where it needs it
  }
  return module;
}

// Each command's modules are loaded when it runs: loading all of them took
// a third of a second on every start (190 modules), which `record` added
// to the wall time of every program it records. Its declaration (options,
// help) is commands.ts's, loaded always.
const RUN: Record<CommandName, (args: string[]) => Promise<number> | number> = {
  record: async (args) => (await import('./record-command.ts')).cmdRecord(args),
  report: async (args) => (await oneShot(import('./analysis-commands.ts'))).cmdReport(args),
  check: async (args) => (await oneShot(import('./analysis-commands.ts'))).cmdCheck(args),
  diff: async (args) => (await oneShot(import('./analysis-commands.ts'))).cmdDiff(args),
  open: async (args) => (await import('./serve-command.ts')).cmdOpen(args),
  serve: async (args) => (await import('./serve-command.ts')).cmdServe(args),
  import: async (args) => (await import('./file-commands.ts')).cmdImport(args),
  merge: async (args) => (await import('./merge.ts')).cmdMerge(args),
  summarize: async (args) => (await oneShot(import('./job-commands.ts'))).cmdSummarize(args),
  export: async (args) => (await oneShot(import('./file-commands.ts'))).cmdExport(args),
  sql: async (args) => {
    const [{ cmdSql }, { defaultSqlHistoryFile }] = await Promise.all([import('./sql.ts'), import('./sql-repl.ts')]);
    return cmdSql(args, { stdin: process.stdin, stdout: process.stdout, stderr: process.stderr, historyFile: defaultSqlHistoryFile() });
  },
  devices: async (args) => (await import('./record-command.ts')).cmdDevices(args),
  ingest: async (args) => (await import('./file-commands.ts')).cmdIngest(args),
  'dump-stream': async (args) => (await import('./file-commands.ts')).cmdDumpStream(args),
};

const OVERVIEW = commandsHelp(`streamscope ${VERSION}: are my CUDA streams really running concurrently?`, COMMANDS);

/** An unknown command: one line naming it and the nearest one, exit 2. */
function unknownCommand(name: string): number {
  process.stderr.write(`streamscope: unknown command '${name}'${didYouMean(name, Object.keys(COMMANDS))}\nsee streamscope --help\n`);
  return 2;
}

async function main(argv: string[]): Promise<number> {
  const [name, ...rest] = argv;
  switch (name) {
    case '--version':
    case '-v':
      process.stdout.write(`${VERSION}\n`);
      return 0;
    case undefined:
      process.stdout.write(OVERVIEW + '\n');
      return 2;
    case '--help':
    case '-h':
    case 'help': {
      // `streamscope help report` is `streamscope report --help`.
      const about = rest[0];
      if (about === undefined) process.stdout.write(OVERVIEW + '\n');
      else if (isCommand(about)) process.stdout.write(commandHelp(about, COMMANDS[about]));
      else return unknownCommand(about);
      return 0;
    }
  }
  if (!isCommand(name)) return unknownCommand(name);
  if (wantsHelp(rest)) {
    process.stdout.write(commandHelp(name, COMMANDS[name]));
    return 0;
  }
  try {
    return await RUN[name](rest);
  } catch (err) {
    if (!(err instanceof UsageError)) throw err;
    process.stderr.write(usageErrorText(name, COMMANDS[name], err));
    return 2;
  }
}

main(process.argv.slice(2)).then(
  // Once stdout has taken everything written: a pipe takes 64 KiB at a time, and exiting at once cut a long report there.
  // After the work a command left to finish (a column cache entry being written: base/before-exit.ts).
  (code) => void exitWorkFinished().then(() => process.stdout.write('', () => process.exit(code))),
  (err: unknown) => {
    const f = failure(err);
    void exitWorkFinished().then(() => fail(f.message, f.code));
  },
);
