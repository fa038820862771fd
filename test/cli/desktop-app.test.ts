// `launchElectron`: here (no Electron binary, no display) it must say why and
// return false at once, never try to download the binary.
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { devices } from '../../profiler/native/addon.ts';
import { filesFromArgs, userArgs } from '../../app/argv.ts';
import { cannotLaunchReason, electronBinary, launchElectron } from '../../profiler/cli/desktop-app.ts';

describe('launchElectron', () => {
  // How quickly: `npm run bench -- --only responsiveness` (a bound on time depends on the machine's load).
  it('returns false with the reason logged', async () => {
    const lines: string[] = [];
    const ok = await launchElectron(['/tmp/x.sqlite'], { log: (l) => lines.push(l) });
    expect(ok).toBe(false);
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/^streamscope: the desktop app cannot start here: /);
  });

  it('names the missing display on Linux, and the missing binary where there is a display', () => {
    expect(cannotLaunchReason({ env: {}, platform: 'linux' })).toMatch(/no display/);
    const withDisplay = cannotLaunchReason({ env: { DISPLAY: ':0' }, platform: 'linux' });
    if ('path' in electronBinary({})) {
      expect(withDisplay).not.toMatch(/no display/);
    } else {
      expect(withDisplay).toMatch(/Electron binary is not installed/);
    }
  });
});

describe('npm start', () => {
  // With a GPU, `npm start` records into the working directory: not in a unit test.
  it.skipIf(devices().devices.length > 0)('--report-only: reports the bundled sample and ends', () => {
    const start = path.resolve(import.meta.dirname, '../../profiler/cli/start.ts');
    const r = spawnSync(process.execPath, [start, '--report-only'], { encoding: 'utf8', timeout: 60_000 });
    expect(r.status).toBe(0);
    expect(r.stderr).toMatch(/showing the bundled H100 sample recording/);
    expect(r.stdout).toMatch(/StreamScope report: .*normalise-concurrent\.sqlite/);
  });
});

describe('command-line files', () => {
  it('`streamscope open FILE...` and plain files, switches skipped, absolute', () => {
    expect(filesFromArgs(['open', 'a.sqlite', '/data/b.sqlite'], '/home/u')).toEqual(['/home/u/a.sqlite', '/data/b.sqlite']);
    expect(filesFromArgs(['--no-sandbox', '--enable-logging=stderr', 'a.sqlite', 'a.sqlite'], '/w')).toEqual(['/w/a.sqlite']);
    expect(filesFromArgs(['--', '-odd-name.sqlite'], '/w')).toEqual(['/w/-odd-name.sqlite']);
    expect(filesFromArgs(['a', 'open'], '/w')).toEqual(['/w/a', '/w/open']);
    expect(filesFromArgs([], '/w')).toEqual([]);
    expect(userArgs(['/opt/StreamScope/streamscope', 'x.sqlite'], true)).toEqual(['x.sqlite']);
    expect(userArgs(['/electron', '/repo/app/dist/main.cjs', 'open', 'x.sqlite'], false)).toEqual(['open', 'x.sqlite']);
  });
});
