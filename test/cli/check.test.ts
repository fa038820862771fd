// `streamscope check`: the CI gate, run as a user's pipeline would, on real
// H100 recordings.
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

const cli = path.resolve(import.meta.dirname, '../../profiler/cli/streamscope.ts');
const fixture = (name: string) => path.resolve(import.meta.dirname, `../fixtures/recordings/${name}.sqlite`);

function run(args: string[]) {
  const r = spawnSync(process.execPath, [cli, ...args], { encoding: 'utf8' });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

describe('streamscope check', () => {
  it('fails a serialized run with a one-line reason naming the overlap and the worst finding', () => {
    const r = run(['check', fixture('normalise-serial'), '--min-overlap', '1.5', '--fail-on', 'warning']);
    expect(r.code).toBe(1);
    const lines = r.stderr.trim().split('\n');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/^FAIL .*normalise-serial\.sqlite: GPU \d+ overlap 1\.00 < 1\.5; 1 finding at warning or worse, worst: single-stream/);
  });

  it('passes the concurrent run of the same work', () => {
    const r = run(['check', fixture('normalise-concurrent'), '--min-overlap', '1.5', '--fail-on', 'warning']);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/^PASS .*overlap GPU \d+ 1\.[5-9]\d/);
  });

  it('--json: the documented shape, with the findings', () => {
    const r = run(['check', fixture('normalise-default-stream'), '--fail-on', 'warning', '--json']);
    expect(r.code).toBe(1);
    const j = JSON.parse(r.stdout);
    expect(j).toMatchObject({ checkVersion: 4, pass: false, failOn: 'warning', minOverlap: null });
    expect(j.overlap[0]).toEqual(expect.objectContaining({ deviceId: expect.any(Number), all: expect.any(Number) }));
    expect(j.findings.map((f: { kind: string }) => f.kind)).toContain('legacy-default-stream');
    expect(j.reasons[0]).toMatch(/legacy-default-stream/);
  });

  it('bad input exits 2 with a message naming the file or the option', () => {
    const missing = run(['check', '/nonexistent/x.sqlite']);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toMatch(/\/nonexistent\/x\.sqlite: no such file/);
    const badOption = run(['check', fixture('normalise-serial'), '--fail-on', 'sometimes']);
    expect(badOption.code).toBe(2);
    expect(badOption.stderr).toMatch(/--fail-on: expected info, warning or error, got 'sometimes'/);
    expect(run(['check', fixture('normalise-serial'), '--min-overlap', 'x']).code).toBe(2);
  });
});

describe('streamscope check --json on a passing run', () => {
  it('keeps stdout to the JSON document alone', () => {
    const r = run(['check', fixture('normalise-concurrent'), '--json']);
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout).pass).toBe(true);
    expect(r.stderr).toMatch(/^PASS /);
  });
});
