// Kernel names as people read them (profiler/contract/names.ts), from the demangled
// form the store keeps beside each mangled name: the function's own name,
// with its template arguments where two kernels of one list would read the
// same, the full declaration where even those agree.
import path from 'node:path';
import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { readableNames, shortName, templateName, type StoredName } from '../../profiler/contract/names.ts';

const ADD =
  'void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctor_add<float>, std::array<char*, 3ul> >(int, at::native::CUDAFunctor_add<float>, std::array<char*, 3ul>)';

describe('shortName', () => {
  it('drops the return type, scopes, template arguments and parameters of a demangled name', () => {
    expect(shortName(ADD)).toBe('vectorized_elementwise_kernel');
    expect(shortName('runner::(anonymous namespace)::normaliseColumns(double const*, double*, int)')).toBe('normaliseColumns');
    expect(shortName('void runner::(anonymous namespace)::transposeTiled<1>(float const*, float*, int)')).toBe('transposeTiled');
    expect(shortName('k(int*)')).toBe('k');
    // Numba's ABI tags.
    expect(shortName('__main__::damp[abi:v1][abi:cw51cXTLS](Array<float, 1, C, mutable, aligned>, long long)')).toBe('damp');
    // A template argument holding a lambda of a function, with its own parentheses and scopes.
    expect(
      shortName(
        'void at::native::vectorized_elementwise_kernel<4, at::native::(anonymous namespace)::launch_clamp_scalar(at::TensorIteratorBase&, c10::Scalar)::{lambda()#1}::operator()() const::{lambda(float)#1}, std::array<char*, 2ul> >(int, std::array<char*, 2ul>)',
      ),
    ).toBe('vectorized_elementwise_kernel');
    // `>` inside parentheses does not close a template argument list.
    expect(shortName('void f<(3>2)>(int)')).toBe('f');
  });

  it('leaves names that are no C++ declaration alone', () => {
    for (const n of [
      'sm80_xmma_gemm_f32f32_f32f32_f32_nn_n_tilesize64x64x8_stage3_warpsize1x4x1_ffma_aligna4_alignc4_execute_kernel__5x_cublas',
      'cudaLaunchKernel',
      'Memcpy HtoD',
      '_Z9normaliseIdEvPKT_PS0_i',
      'unbalanced<(int',
      '',
    ]) {
      expect(shortName(n)).toBe(n);
    }
  });

  it('templateName keeps the template arguments, not the scopes', () => {
    expect(templateName(ADD)).toBe('vectorized_elementwise_kernel<4, at::native::CUDAFunctor_add<float>, std::array<char*, 3ul> >');
    expect(templateName('runner::(anonymous namespace)::normaliseColumns(double const*, double*, int)')).toBe('normaliseColumns');
  });
});

describe('readableNames', () => {
  it('short where unique; template arguments, then the full declaration, then the stored name where names would read the same', () => {
    const add: StoredName = {
      name: '_ZN2at6native29vectorized_elementwise_kernelILi4ENS0_15CUDAFunctor_addIfEESt5arrayIPcLm3EEEEviT0_T1_',
      demangledName: ADD,
    };
    const mul: StoredName = { name: '_Zmul', demangledName: ADD.replaceAll('CUDAFunctor_add', 'MulFunctor') };
    const a: StoredName = { name: '_Za', demangledName: 'void a::fill<float>(float*)' };
    const b: StoredName = { name: '_Zb', demangledName: 'void b::fill<float>(float*)' };
    const gemm: StoredName = { name: 'sm80_xmma_gemm_f32f32', demangledName: null };
    const m = readableNames([add, mul, a, b, gemm, add, { name: '_Z1kPi', demangledName: 'k(int*)' }]);
    expect(m.get(add.name)).toBe('vectorized_elementwise_kernel<4, at::native::CUDAFunctor_add<float>, std::array<char*, 3ul> >');
    expect(m.get(mul.name)).toBe('vectorized_elementwise_kernel<4, at::native::MulFunctor<float>, std::array<char*, 3ul> >');
    expect(m.get(a.name)).toBe('void a::fill<float>(float*)');
    expect(m.get(b.name)).toBe('void b::fill<float>(float*)');
    expect(m.get(gemm.name)).toBe('sm80_xmma_gemm_f32f32');
    expect(m.get('_Z1kPi')).toBe('k');
    // Two stored names with one demangled form (cannot happen for real manglings) keep their stored names.
    const twins = readableNames([
      { name: '_Zx', demangledName: 'f(int)' },
      { name: '_Zy', demangledName: 'f(int)' },
    ]);
    expect([...twins.values()]).toEqual(['_Zx', '_Zy']);
  });

  it('on torch_streams.sqlite: three instances of vectorized_elementwise_kernel with their template arguments, no mangled name', () => {
    const db = new Database(path.resolve(import.meta.dirname, '../fixtures/recordings/torch_streams.sqlite'), { readonly: true });
    const kernels = db
      .prepare('SELECT DISTINCT s.value AS name, s.demangled AS demangledName FROM kernels k JOIN strings s ON s.id = k.name_id')
      .all() as StoredName[];
    db.close();
    const labels = [...readableNames(kernels).values()];
    expect(labels.filter((l) => l.startsWith('vectorized_elementwise_kernel<4, '))).toHaveLength(3);
    expect(labels).toContain('distribution_elementwise_grid_stride_kernel');
    expect(labels.filter((l) => l.startsWith('sm80_xmma_gemm_'))).toHaveLength(2);
    expect(labels.some((l) => l.startsWith('_Z'))).toBe(false);
    expect(new Set(labels).size).toBe(kernels.length);
  });
});
