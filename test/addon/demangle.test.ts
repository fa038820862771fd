// The addon's demangle() (abi::__cxa_demangle) on the kernel names real
// recordings hold — PyTorch's templates and lambdas, the runner's kernels in
// anonymous namespaces, Numba's ABI tags — against what binutils' c++filt
// prints for the same names: an implementation independent of the C++
// runtime's demangler.
import { execFileSync } from 'node:child_process';
import path from 'node:path';
import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { demangle } from '../../profiler/native/addon.ts';

const fixture = (name: string) => path.resolve(import.meta.dirname, '../fixtures/recordings', name);

/** Distinct stored strings of the fixtures that look mangled. */
function mangledNames(files: string[]): string[] {
  const names = new Set<string>();
  for (const f of files) {
    const db = new Database(fixture(f), { readonly: true });
    try {
      for (const v of db.prepare("SELECT value FROM strings WHERE substr(value, 1, 2) = '_Z'").pluck().all() as string[]) names.add(v);
    } finally {
      db.close();
    }
  }
  return [...names].sort();
}

function cxxfilt(names: string[]): string[] | null {
  try {
    return execFileSync('c++filt', [], { input: names.join('\n') + '\n', encoding: 'utf8' })
      .split('\n')
      .slice(0, names.length);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw err;
  }
}

const FIXTURES = [
  'torch_streams.sqlite',
  'torch_prefetch.sqlite',
  'normalise-concurrent.sqlite',
  'matmul-concurrent.sqlite',
  'transpose-concurrent.sqlite',
  'numba_streams.sqlite',
  'numba_pinned_loop.sqlite',
  'per-thread-default-stream.sqlite',
];
const names = mangledNames(FIXTURES);
const oracle = cxxfilt(names);
if (!oracle) console.warn('SKIPPED: c++filt (binutils) is not installed: the comparison of demangle() with it cannot run');

describe('demangle()', () => {
  it.skipIf(!oracle)('demangles every mangled kernel name of the fixtures exactly as c++filt does', () => {
    expect(names.length).toBeGreaterThanOrEqual(8);
    expect(names.some((n) => n.startsWith('_ZN2at6native29vectorized_elementwise_kernel'))).toBe(true);
    expect(names.some((n) => n.startsWith('_ZN6runner'))).toBe(true);
    expect(demangle(names)).toEqual(oracle);
  });

  it('reads PyTorch and runner kernels as Nsight Systems shows them', () => {
    const [binary, runner] = demangle([
      '_ZN2at6native29vectorized_elementwise_kernelILi4ENS0_13BUnaryFunctorIfffNS0_15binary_internal10MulFunctorIfEEEESt5arrayIPcLm2EEEEviT0_T1_',
      '_ZN6runner45_GLOBAL__N__b676d823_12_normalise_cu_d6a3819516normaliseColumnsEPKdPdi',
    ]);
    expect(binary).toBe(
      'void at::native::vectorized_elementwise_kernel<4, at::native::BUnaryFunctor<float, float, float, ' +
        'at::native::binary_internal::MulFunctor<float> >, std::array<char*, 2ul> >(int, at::native::BUnaryFunctor<float, float, float, ' +
        'at::native::binary_internal::MulFunctor<float> >, std::array<char*, 2ul>)',
    );
    expect(runner).toBe('runner::(anonymous namespace)::normaliseColumns(double const*, double*, int)');
  });

  it('is null for names that are not mangled C++ names, or do not demangle', () => {
    // cuBLAS's C kernel, API and NVTX names; bare type codes ("i" would read "int"); broken manglings.
    expect(
      demangle([
        'sm80_xmma_gemm_f32f32_f32f32_f32_nn_n_tilesize64x64x8_stage3_warpsize1x4x1_ffma_aligna4_alignc4_execute_kernel__5x_cublas',
        'cudaLaunchKernel',
        'issue chunk 0',
        'i',
        'f',
        '',
        '_Z',
        '_Zgarbage',
        '_ZN2at6native',
      ]),
    ).toEqual([null, null, null, null, null, null, null, null, null]);
    expect(demangle([])).toEqual([]);
  });

  it('rejects anything but an array of strings', () => {
    expect(() => demangle('_Z1fv' as unknown as string[])).toThrow('demangle expects an array of strings');
    expect(() => demangle(['_Z1fv', 3 as unknown as string])).toThrow('entry 1 is not a string');
  });
});
