// `streamscope report` names kernels from their demangled form (schema 7):
// on PyTorch's recording the text never shows a mangled `_Z…` name, three
// instances of one kernel template read apart by the template argument they differ in,
// and the JSON keeps the stored (mangled) name beside the demangled one.
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';

const cli = path.resolve(import.meta.dirname, '../../profiler/cli/streamscope.ts');
const torch = path.resolve(import.meta.dirname, '../fixtures/recordings/torch_streams.sqlite');
const run = (args: string[]) => spawnSync(process.execPath, [cli, ...args], { encoding: 'utf8' });

describe('streamscope report: kernel names', () => {
  it('text: no mangled name on torch_streams.sqlite, short names where they are unambiguous', () => {
    const r = run(['report', torch, '--whole']);
    expect(r.status, r.stderr).toBe(0);
    expect(r.stdout).not.toMatch(/_Z/);
    const kernels = r.stdout.slice(r.stdout.indexOf('\nKernels'));
    expect(kernels).toMatch(/ distribution_elementwise_grid_stride_kernel$/m);
    // Three instances of one template, told apart by the argument they differ in (profiler/contract/names.ts).
    expect(kernels.match(/ vectorized_elementwise_kernel<…, /g)).toHaveLength(3);
    expect(kernels).toMatch(/ vectorized_elementwise_kernel<…, BUnaryFunctor<…>, …>$/m);
  });

  it('JSON: name as stored, demangledName beside it', () => {
    const r = run(['report', torch, '--whole', '--json']);
    expect(r.status, r.stderr).toBe(0);
    const kernels = JSON.parse(r.stdout).kernels as { name: string; demangledName: string | null }[];
    const db = new Database(torch, { readonly: true });
    const stored = new Map(db.prepare('SELECT value, demangled FROM strings').raw().all() as [string, string | null][]);
    db.close();
    expect(kernels.length).toBe(6);
    for (const k of kernels) expect(k.demangledName, k.name).toBe(stored.get(k.name));
    expect(kernels.filter((k) => k.name.startsWith('_Z')).every((k) => k.demangledName?.startsWith('void at::native::'))).toBe(true);
    expect(kernels.filter((k) => k.name.startsWith('sm80_')).map((k) => k.demangledName)).toEqual([null, null]);
  });
});
