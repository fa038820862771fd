// Kernel names as people read them (profiler/names.ts): the function's own
// name out of a mangled one, as the timeline and the text reports show it,
// and the full name where two kernels would otherwise read the same.
import { describe, expect, it } from 'vitest';
import { readableNames, shortName } from '../../profiler/names.ts';

describe('shortName', () => {
  it('reads the function name out of mangled kernel names', () => {
    expect(shortName('_ZN6runner45_GLOBAL__N__b676d823_12_normalise_cu_d6a3819516normaliseColumnsEPKdPdi')).toBe('normaliseColumns');
    expect(shortName('_Z6matmulPKfS0_Pfi')).toBe('matmul');
    expect(shortName('_ZN2at6native29vectorized_elementwise_kernelILi4ENS0_11FillFunctorIfEESt5arrayIPcLm1EEEEviT0_T1_')).toBe('vectorized_elementwise_kernel');
  });
  it('leaves other names alone', () => {
    expect(shortName('cudaLaunchKernel')).toBe('cudaLaunchKernel');
    expect(shortName('Memcpy HtoD')).toBe('Memcpy HtoD');
    expect(shortName('_Zgarbage')).toBe('_Zgarbage');
  });
});

describe('readableNames', () => {
  it('short where unique, full where two names would read the same', () => {
    const a = '_ZN2at6native29vectorized_elementwise_kernelILi4ENS0_11FillFunctorIfEESt5arrayIPcLm1EEEEviT0_T1_';
    const b = '_ZN2at6native29vectorized_elementwise_kernelILi2ENS0_11FillFunctorIfEESt5arrayIPcLm1EEEEviT0_T1_';
    const m = readableNames(['_Z6matmulPKfS0_Pfi', a, b, 'cudaMemcpyAsync', a]);
    expect(m.get('_Z6matmulPKfS0_Pfi')).toBe('matmul');
    expect(m.get(a)).toBe(a);
    expect(m.get(b)).toBe(b);
    expect(m.get('cudaMemcpyAsync')).toBe('cudaMemcpyAsync');
  });
});
