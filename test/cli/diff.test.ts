// `streamscope diff` on the H100 recordings of one workload: default-stream
// (A) against concurrent (B) — the change a user makes after reading the
// diagnosis.
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

const cli = path.resolve(import.meta.dirname, '../../profiler/cli/streamscope.ts');
const fixture = (name: string) => path.resolve(import.meta.dirname, `../fixtures/recordings/${name}.sqlite`);
const run = (args: string[]) => spawnSync(process.execPath, [cli, ...args], { encoding: 'utf8' });

describe('streamscope diff', () => {
  it('shows the time gained, the overlap change and the default-stream finding fixed', () => {
    const r = run(['diff', fixture('normalise-default-stream'), fixture('normalise-concurrent'), '--json']);
    expect(r.status, r.stderr).toBe(0);
    const d = JSON.parse(r.stdout);
    expect(d.diffVersion).toBe(2);
    expect(d.gpuSpanNs.delta).toBeLessThan(0);
    expect(d.gpuSpanNs.b).toBeLessThan(d.gpuSpanNs.a);
    expect(d.devices[0].overlap.all.b).toBeGreaterThan(d.devices[0].overlap.all.a);
    expect(d.findings.find((f: { kind: string }) => f.kind === 'legacy-default-stream')).toMatchObject({ status: 'fixed' });
    expect(d.kernels[0].count).toMatchObject({ a: 8, b: 8, delta: 0 });
    expect(d.copies.map((c: { direction: string }) => c.direction).sort()).toEqual(['DtoH', 'HtoD']);
  });

  it('text: one table per part, the fixed finding marked', () => {
    const r = run(['diff', fixture('normalise-default-stream'), fixture('normalise-concurrent')]);
    expect(r.stdout).toMatch(/GPU span \(first op → last op\)\s+\S+ ms\s+\S+ ms\s+−/);
    expect(r.stdout).toMatch(/FIXED\s+legacy-default-stream/);
    // Kernels by their own name, as the timeline shows them, not mangled.
    expect(r.stdout).toMatch(/8 → 8 .* normaliseColumns\s*$/m);
    expect(r.stdout).not.toContain('_ZN6runner');
  });

  it('--fail-if-slower gates a regression with a one-line reason', () => {
    const slower = run(['diff', fixture('normalise-concurrent'), fixture('normalise-serial'), '--fail-if-slower', '5%']);
    expect(slower.status).toBe(1);
    expect(slower.stderr.trim()).toMatch(/^FAIL .*normalise-serial\.sqlite is \d+\.\d% slower than .*normalise-concurrent\.sqlite/);
    expect(run(['diff', fixture('normalise-serial'), fixture('normalise-concurrent'), '--fail-if-slower', '5%']).status).toBe(0);
    expect(run(['diff', fixture('normalise-serial'), fixture('normalise-concurrent'), '--fail-if-slower', 'lots']).status).toBe(2);
    const missing = run(['diff', '/nonexistent/a.sqlite', fixture('normalise-concurrent')]);
    expect(missing.status).toBe(2);
    expect(missing.stderr).toContain('/nonexistent/a.sqlite: no such file');
  });
});

describe('streamscope report', () => {
  it('names kernels as the timeline does (the full name stays in --json)', () => {
    const text = run(['report', fixture('normalise-concurrent')]);
    expect(text.status, text.stderr).toBe(0);
    expect(text.stdout).toMatch(/^\s+8 .* normaliseColumns\s*$/m);
    expect(text.stdout).not.toContain('_ZN6runner');
    const json = JSON.parse(run(['report', fixture('normalise-concurrent'), '--json']).stdout);
    expect(json.kernels[0].name).toMatch(/^_ZN6runner.*normaliseColumns/);
  });
});
