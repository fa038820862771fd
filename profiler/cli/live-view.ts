// `record --live`: the timeline of the recording while it is made. The
// viewer is a process of its own — the desktop app where it can start,
// else `streamscope serve` in browser mode — never this one: the recorder's
// ingest writes the file through the addon's SQLite, and a reader in the
// same process (better-sqlite3's SQLite) would share its POSIX locks
// (profiler/query/analysis-channel.ts says why that breaks reads).
//
// The viewer follows the file as it grows and shows it finished at the end
// (docs/COMMANDS.md, "Live recordings"). Browser mode's server is started
// with an IPC channel, so it ends with the recorder however the recorder
// ends; the recorder keeps it serving after the recording until Ctrl-C.
import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import readline from 'node:readline';
import { fileURLToPath } from 'node:url';

export interface LiveView {
  /** Browser mode's URL (with its token); null in the desktop app. */
  url: string | null;
  /** Ends browser mode's server (the desktop app stays: it is the user's window). */
  stop(): void;
}

const CLI = path.join(path.dirname(fileURLToPath(import.meta.url)), 'streamscope.ts');

/** Opens the viewer on `file` (which exists: created, maybe still empty); `say` gets the lines for the user. */
export async function openLiveView(file: string, say: (line: string) => void): Promise<LiveView> {
  try {
    // Loaded only here: `record` starts without it.
    const { launchElectron } = await import('./desktop-app.ts');
    if (await launchElectron([file], { log: say })) {
      say(`streamscope: live view: ${path.basename(file)} in the desktop app`);
      return { url: null, stop: () => {} };
    }
  } catch (err) {
    say(`streamscope: the desktop app cannot start here: ${(err as Error).message}`);
  }
  const child: ChildProcess = spawn(process.execPath, [CLI, 'serve', file], {
    // Its own process group: the terminal's Ctrl-C, meant for the target, must not stop the view.
    detached: true,
    stdio: ['ignore', 'pipe', 'inherit', 'ipc'],
  });
  child.unref();
  child.channel?.unref();
  const url = await new Promise<string | null>((resolve) => {
    const lines = readline.createInterface({ input: child.stdout! });
    lines.on('line', (line) => {
      const m = /(http:\/\/\S+)/.exec(line);
      if (m) resolve(m[1]!);
    });
    child.once('exit', () => resolve(null));
  });
  if (url) say(`streamscope: live view (browser mode, read-only): ${url}`);
  else say('streamscope: the live view could not be started (see above); the recording goes on');
  return {
    url,
    stop: () => {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
    },
  };
}
