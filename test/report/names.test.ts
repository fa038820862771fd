// Kernel names as people read them (profiler/contract/names.ts), from the demangled
// form the store keeps beside each mangled name: the function's own name
// (with its scope and first template argument where that name says nothing,
// CUTLASS's Kernel2), with its template arguments made short where two
// kernels of one list would read the same, the full declaration where even
// those agree. The real names come from the recordings in test/fixtures.
import fs from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { readableNames, shortName, templateName, type StoredName } from '../../profiler/contract/names.ts';

const fixtures = path.resolve(import.meta.dirname, '../fixtures');

/** The distinct kernel names of a recording, as stored with their demangled forms. */
function kernelNames(file: string): StoredName[] {
  const db = new Database(path.join(fixtures, file), { readonly: true });
  try {
    return db.prepare('SELECT DISTINCT s.value AS name, s.demangled AS demangledName FROM kernels k JOIN strings s ON s.id = k.name_id').all() as StoredName[];
  } finally {
    db.close();
  }
}

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

  it("keeps the scope and first template argument of a name that says nothing by itself (cuBLAS's Kernel2, gemvx::kernel)", () => {
    const full = (file: string, re: RegExp) =>
      kernelNames(file)
        .map((n) => n.demangledName ?? n.name)
        .filter((n) => re.test(n));
    const cutlass = full('recordings/torch_train_loop.sqlite', /Kernel2</);
    expect(cutlass).toEqual(['void cutlass::Kernel2<cutlass_80_simt_sgemm_128x256_8x4_nt_align1>(cutlass_80_simt_sgemm_128x256_8x4_nt_align1::Params)']);
    expect(shortName(cutlass[0]!)).toBe('cutlass::Kernel2<cutlass_80_simt_sgemm_128x256_8x4_nt_align1>');
    const gemv = full('corpus/torch-item-per-step/bug.sqlite', /gemvx::kernel</);
    expect(gemv.length).toBeGreaterThan(0);
    for (const g of gemv) expect(shortName(g)).toBe('gemvx::kernel<int, …>');
    // The rule is the name's, not its spelling's: a kernel merely ending in "kernel" keeps its own name.
    expect(shortName(ADD)).toBe('vectorized_elementwise_kernel');
    expect(shortName('void ns::device_kernel<ns::Gemm<float, 4> >(ns::Params)')).toBe('ns::device_kernel<Gemm<float, 4>>');
    expect(shortName('void Kernel(float*)')).toBe('Kernel');
  });
});

describe('readableNames', () => {
  it('short where unique; the template arguments that differ, then the full declaration, then the stored name where names would read the same', () => {
    const add: StoredName = {
      name: '_ZN2at6native29vectorized_elementwise_kernelILi4ENS0_15CUDAFunctor_addIfEESt5arrayIPcLm3EEEEviT0_T1_',
      demangledName: ADD,
    };
    const mul: StoredName = { name: '_Zmul', demangledName: ADD.replaceAll('CUDAFunctor_add', 'MulFunctor') };
    const a: StoredName = { name: '_Za', demangledName: 'void a::fill<float>(float*)' };
    const b: StoredName = { name: '_Zb', demangledName: 'void b::fill<float>(float*)' };
    const gemm: StoredName = { name: 'sm80_xmma_gemm_f32f32', demangledName: null };
    const m = readableNames([add, mul, a, b, gemm, add, { name: '_Z1kPi', demangledName: 'k(int*)' }]);
    // The arguments both share (4, std::array<…>) elided; what tells them apart kept, without its scopes.
    expect(m.get(add.name)).toBe('vectorized_elementwise_kernel<…, CUDAFunctor_add<…>, …>');
    expect(m.get(mul.name)).toBe('vectorized_elementwise_kernel<…, MulFunctor<…>, …>');
    expect(m.get(a.name)).toBe('void a::fill<float>(float*)');
    expect(m.get(b.name)).toBe('void b::fill<float>(float*)');
    expect(m.get(gemm.name)).toBe('sm80_xmma_gemm_f32f32');
    expect(m.get('_Z1kPi')).toBe('k');
    // Arguments that differ only deeper down are shown as deep as that.
    const deep = readableNames([
      { name: '_Zf', demangledName: 'void f<4, ns::Pair<ns::Float, 1>, ns::Pair<int, 2> >(int)' },
      { name: '_Zg', demangledName: 'void f<4, ns::Pair<ns::Float, 1>, ns::Pair<int, 3> >(int)' },
    ]);
    expect([...deep.values()]).toEqual(['f<…, Pair<int, 2>>', 'f<…, Pair<int, 3>>']);
    // Two stored names with one demangled form (cannot happen for real manglings) keep their stored names.
    const twins = readableNames([
      { name: '_Zx', demangledName: 'f(int)' },
      { name: '_Zy', demangledName: 'f(int)' },
    ]);
    expect([...twins.values()]).toEqual(['_Zx', '_Zy']);
  });

  it('on torch_streams.sqlite: three instances of vectorized_elementwise_kernel told apart by their functor, no mangled name', () => {
    const kernels = kernelNames('recordings/torch_streams.sqlite');
    const m = readableNames(kernels);
    const labels = [...m.values()];
    expect(labels.filter((l) => l.startsWith('vectorized_elementwise_kernel<')).sort()).toEqual([
      'vectorized_elementwise_kernel<…, AUnaryFunctor<…>, …>',
      'vectorized_elementwise_kernel<…, BUnaryFunctor<…>, …>',
      'vectorized_elementwise_kernel<…, launch_clamp_scalar::{lambda(float)#1}, …>',
    ]);
    expect(labels).toContain('distribution_elementwise_grid_stride_kernel');
    expect(labels.filter((l) => l.startsWith('sm80_xmma_gemm_'))).toHaveLength(2);
    expect(labels.some((l) => l.startsWith('_Z'))).toBe(false);
    expect(new Set(labels).size).toBe(kernels.length);
  });

  it('on torch_train_loop.sqlite: eight vectorized_elementwise_kernel instances, each named by what it computes', () => {
    const kernels = kernelNames('recordings/torch_train_loop.sqlite');
    const m = readableNames(kernels);
    const label = (re: RegExp) => kernels.filter((k) => re.test(k.demangledName ?? k.name)).map((k) => m.get(k.name));
    expect(label(/^void at::native::vectorized_elementwise_kernel<4, at::native::FillFunctor<float>/)).toEqual([
      'vectorized_elementwise_kernel<…, FillFunctor<…>, …>',
    ]);
    // Three BinaryFunctors, which read the same one level deep: what tells them apart is their own
    // arguments, and only those (the vector size and the std::array they share are elided).
    expect(label(/^void at::native::vectorized_elementwise_kernel<4, at::native::BinaryFunctor</).sort()).toEqual([
      'vectorized_elementwise_kernel<…, BinaryFunctor<bool, bool, bool, MulFunctor<…>>, …>',
      'vectorized_elementwise_kernel<…, BinaryFunctor<float, float, bool, CompareEqFunctor<…>>, …>',
      'vectorized_elementwise_kernel<…, BinaryFunctor<float, float, float, threshold_kernel_impl<…>::{lambda(float, float)#1}>, …>',
    ]);
    expect(label(/Kernel2</)).toEqual(['cutlass::Kernel2<cutlass_80_simt_sgemm_128x256_8x4_nt_align1>']);
    const all = label(/vectorized_elementwise_kernel</);
    expect(all).toHaveLength(8);
    expect(new Set(all).size).toBe(8);
  });

  it('every recording in the fixtures: one label per kernel, none mangled, none longer than a table cell can hold', () => {
    const files = ['recordings', 'corpus'].flatMap((dir) =>
      fs
        .readdirSync(path.join(fixtures, dir), { recursive: true, encoding: 'utf8' })
        .filter((f) => f.endsWith('.sqlite') && !f.includes('crashed'))
        .map((f) => path.join(dir, f)),
    );
    expect(files.length).toBeGreaterThan(60);
    for (const file of files) {
      const kernels = kernelNames(file);
      const labels = [...readableNames(kernels).values()];
      expect(new Set(labels).size, file).toBe(kernels.length);
      for (const l of labels) {
        expect(l, file).not.toMatch(/^_Z/);
        expect(l.length, `${file}: ${l}`).toBeLessThanOrEqual(150);
      }
    }
  });
  // Issue 27: asked per member, whether the members of a group share an argument cost the square of the group:
  // 40,000 instances of one template took 71 s (20,000: 18 s), in a served recording's first window.
  it('30,000 instances of one template: each its own label, in time that grows with the names, not their square', () => {
    const names = Array.from({ length: 30_000 }, (_, i) => ({
      name: `_Zkernel${i}`,
      demangledName: `void at::native::vectorized_elementwise_kernel<4, at::native::Functor${i}<float>, at::detail::Array<char*, 2> >(int, at::native::Functor${i}<float>, at::detail::Array<char*, 2>)`,
    }));
    const t0 = performance.now();
    const labels = readableNames(names);
    const ms = performance.now() - t0;
    expect(new Set(labels.values()).size).toBe(names.length);
    expect(labels.get('_Zkernel7')).toBe('vectorized_elementwise_kernel<…, Functor7<…>, …>');
    // ~1.4 s on the 2-core machine; it was ~40 s.
    expect(ms).toBeLessThan(10_000);
  });
});
