// Every command's --help and -h, and the one-line errors of a command line
// that does not fit, run as a user runs them (a child process). The commands
// are the CLI's own table (profiler/cli/commands.ts): one added to it
// without options described or an example fails here.
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { COMMANDS } from '../../profiler/cli/commands.ts';
import type { CommandSpec } from '../../profiler/cli/usage.ts';
import { IMPORT_FORMATS } from '../../profiler/import/index.ts';
import { repoRoot } from '../../profiler/native/paths.ts';

const cli = path.join(repoRoot, 'profiler/cli/streamscope.ts');
const fixture = path.join(repoRoot, 'test/fixtures/recordings/normalise-concurrent.sqlite');
function run(args: string[]) {
  const r = spawnSync(process.execPath, [cli, ...args], { encoding: 'utf8' });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

const commands = Object.entries(COMMANDS as Record<string, CommandSpec>);

describe('streamscope COMMAND --help and -h, for every command', () => {
  it('the table has the commands people know', () => {
    for (const name of ['record', 'report', 'check', 'diff', 'open', 'serve', 'import', 'merge', 'export', 'sql', 'devices']) {
      expect(COMMANDS).toHaveProperty(name);
    }
  });

  it.each(commands)('%s: usage, every option with its line, an example; exit 0', (name, spec) => {
    for (const flag of ['--help', '-h']) {
      const r = run([name, flag]);
      expect(r.code, `${name} ${flag}: ${r.stderr}`).toBe(0);
      expect(r.stderr).toBe('');
      expect(r.stdout.startsWith(`usage: streamscope ${name}`), r.stdout).toBe(true);
      const lines = r.stdout.split('\n');
      for (const [option, o] of Object.entries(spec.options)) {
        expect(o.description.length, `${name} --${option}`).toBeGreaterThan(0);
        // The option and its description on one line, or the description on the line below a long form.
        const at = lines.findIndex((l) => new RegExp(`^  (-\\w, )?--${option}\\b`).test(l));
        expect(at, `${name} --${option}`).toBeGreaterThanOrEqual(0);
        expect(`${lines[at]}\n${lines[at + 1]}`, `${name} --${option}`).toContain(o.description);
        if (o.short) expect(lines[at], `${name} --${option}`).toContain(`-${o.short}, --${option}`);
        const dflt = o.default ?? o.otherwise;
        if (dflt !== undefined) expect(`${lines[at]}\n${lines[at + 1]}`).toContain(`(default: ${dflt})`);
      }
      const examples = r.stdout.slice(r.stdout.indexOf('\nexamples:\n'));
      expect(spec.examples.length, name).toBeGreaterThan(0);
      expect(examples).toMatch(new RegExp(`^  streamscope ${name}( |$)`, 'm'));
      for (const [line] of spec.examples) expect(examples).toContain(`  streamscope ${line}\n`);
    }
  });

  it('help COMMAND is COMMAND --help; --help among other arguments still asks for help', () => {
    expect(run(['help', 'merge'])).toEqual(run(['merge', '--help']));
    const among = run(['report', fixture, '--json', '-h']);
    expect(among.code).toBe(0);
    expect(among.stdout).toBe(run(['report', '--help']).stdout);
  });

  it('streamscope --help lists every command with its line; no command at all does too, with exit 2', () => {
    const r = run(['--help']);
    expect(r.code).toBe(0);
    for (const [name, spec] of commands) expect(r.stdout).toMatch(new RegExp(`^  ${name} +${spec.summary.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}$`, 'm'));
    expect(run(['-h']).stdout).toBe(r.stdout);
    expect(run(['help']).stdout).toBe(r.stdout);
    const none = run([]);
    expect(none.code).toBe(2);
    expect(none.stdout).toBe(r.stdout);
  });

  it('the declared choices are the ones the code takes', () => {
    expect([...COMMANDS.import.options.format.choices]).toEqual([...IMPORT_FORMATS]);
  });
});

describe('a command line that does not fit: one line naming the command, then where its help is; exit 2', () => {
  const said = (command: string, message: string) => `streamscope ${command}: ${message}\nsee streamscope ${command} --help\n`;

  it('an unknown option, with the nearest one', () => {
    // Each is refused before anything reads a file or starts a program.
    const cases: [string[], string, string][] = [
      [['report', 'x.sqlite', '--jsn'], 'report', 'unknown option --jsn (did you mean --json?)'],
      [['report', 'x.sqlite', '--iter'], 'report', 'unknown option --iter (did you mean --iterations?)'],
      [['merge', 'a.sqlite', 'b.sqlite', '-o', 'job.sqlite', '--algin', 'wall-clock'], 'merge', 'unknown option --algin (did you mean --align?)'],
      [['record', '--captur-range', 'nvtx:step', '--', 'true'], 'record', 'unknown option --captur-range (did you mean --capture-range?)'],
      [['sql', 'x.sqlite', 'SELECT 1', '--max-row', '5'], 'sql', 'unknown option --max-row (did you mean --max-rows?)'],
      [['serve', '--prot', '8080', 'x.sqlite'], 'serve', 'unknown option --prot (did you mean --port?)'],
      [['export', 'x.sqlite', '-O', 'out.json'], 'export', 'unknown option -O (did you mean -o?)'],
      [['check', 'x.sqlite', '--jsno'], 'check', 'unknown option --jsno (did you mean --json?)'],
      // --no- only where declared (report --no-job).
      [['check', 'x.sqlite', '--no-json'], 'check', 'unknown option --no-json'],
      [['devices', '--quux'], 'devices', 'unknown option --quux'],
    ];
    for (const [args, command, message] of cases) {
      const r = run(args);
      expect(r, args.join(' ')).toEqual({ code: 2, stdout: '', stderr: said(command, message) });
    }
  });

  it('a missing value, a value not among the choices, an option of no value given one', () => {
    expect(run(['report', 'x.sqlite', '--range'])).toMatchObject({ code: 2, stderr: said('report', '--range needs a value (NAME[#k])') });
    expect(run(['record', '-o', '--force', '--', 'true'])).toMatchObject({ code: 2, stderr: said('record', '-o needs a value (FILE)') });
    expect(run(['record', '--progress', 'jsn', '--', 'true'])).toMatchObject({
      code: 2,
      stderr: said('record', "--progress: expected text or json, got 'jsn' (did you mean json?)"),
    });
    expect(run(['check', 'x.sqlite', '--fail-on', 'fatal'])).toMatchObject({
      code: 2,
      stderr: said('check', "--fail-on: expected info, warning or error, got 'fatal'"),
    });
    expect(run(['report', 'x.sqlite', '--json=yes'])).toMatchObject({ code: 2, stderr: said('report', "--json takes no value, got 'yes'") });
    // Values the command itself checks say so the same way.
    expect(run(['serve', '--port', 'http', 'x.sqlite'])).toMatchObject({
      code: 2,
      stderr: said('serve', "--port: expected a port number (0–65535), got 'http'"),
    });
    expect(run(['report', fixture, '--whole', '--range', 'step'])).toMatchObject({
      code: 2,
      stderr: said('report', 'give one scope, not --whole and --range'),
    });
  });

  it('a missing or extra argument adds the usage line', () => {
    const missing = run(['export', fixture]);
    expect(missing).toMatchObject({ code: 2, stdout: '' });
    expect(missing.stderr).toBe(
      'streamscope export: missing -o OUT.json\nusage: streamscope export FILE -o OUT.json [options]\nsee streamscope export --help\n',
    );
    expect(run(['diff', fixture]).stderr).toMatch(/^streamscope diff: missing B\.sqlite\nusage: streamscope diff A\.sqlite B\.sqlite /);
    expect(run(['check', fixture, 'other.sqlite']).stderr).toMatch(/^streamscope check: unexpected argument 'other\.sqlite'\n/);
  });

  it('an unknown command, with the nearest one', () => {
    for (const [typed, meant] of [
      ['reprot', 'report'],
      ['exprot', 'export'],
      ['sq', 'sql'],
      ['dev', 'devices'],
    ]) {
      const r = run([typed!, fixture]);
      expect(r, typed).toEqual({ code: 2, stdout: '', stderr: `streamscope: unknown command '${typed}' (did you mean ${meant}?)\nsee streamscope --help\n` });
    }
    expect(run(['help', 'mrege']).stderr).toBe("streamscope: unknown command 'mrege' (did you mean merge?)\nsee streamscope --help\n");
    expect(run(['frobnicate']).stderr).toBe("streamscope: unknown command 'frobnicate'\nsee streamscope --help\n");
  });
});
