// What NCCL is, by the names it leaves in a recording: its kernels' names
// (the collective each runs, with the variant: algorithm, protocol, data
// type, reduction) and its API calls' names, as its NVTX ranges carry them.
// Clock alignment (merge/), the communication breakdown and the stragglers
// (analysis/) all read NCCL through here.
//
// NCCL kernel names, in every form NCCL has used (NVIDIA/nccl on GitHub):
//
//   2.3        ncclAllReduceLLKernel_sum_f32, ncclAllReduceKernel_sum_f32
//              (src/collectives/collectives.h: NCCL_KERN_NAME(coll, op, dtype)
//              = coll##Kernel_##op##_##dtype, coll = ncclAllReduce[LL])
//   2.4 – 2.7  ncclAllReduceRingLLKernel_sum_f32, ncclAllReduceTreeLLKernel_…,
//              ncclAllReduceCollNetLLKernel_… (2.7), ncclAllGatherRingLLKernel_copy_i8,
//              ncclSendRecvKernel_copy_i8 (2.7) (src/include/collectives.h, the same
//              macro over coll##Ring/Tree/CollNet##LL; src/collectives/device/common.h)
//   2.8 – 2.18 ncclKernel_AllReduce_RING_LL_Sum_float, …_COLLNET_DIRECT_LL_…,
//              ncclKernel_AllGather_RING_LL_Sum_int8_t, ncclKernel_SendRecv_RING_SIMPLE_Sum_int8_t
//              (src/include/collectives.h: NCCL_KERN_NAME(func, algo, proto, redop, type)
//              = ncclKernel_##func##_##algo##_##proto##_##redop##_##type; type is the C type,
//              and AllGather, Broadcast and SendRecv carry Sum/int8_t as placeholders)
//   2.19 –     ncclDevKernel_AllReduce_Sum_f32_RING_LL, ncclDevKernel_ReduceScatter_Sum_bf16_RING_LL,
//              ncclDevKernel_AllGather_RING_LL, ncclDevKernel_Broadcast_RING_LL,
//              ncclDevKernel_SendRecv, ncclDevKernel_Generic (src/device/generate.py:
//              paste("_", "ncclDevKernel", coll, redop, ty, algo, proto) over best_kernel();
//              Generic in src/device/common.cu runs any collective)
//   2.27       ncclSymDevKernel_AllReduce_AGxLL_R_sum_f32, ncclSymDevKernel_AllGather_LL
//   2.28 –     ncclSymkDevKernel_… (symmetric-memory kernels: src/device/symmetric/generate.py,
//              kernel_cname(): coll, algo, red, ty; algorithm names hold underscores)
//
// RCCL (AMD's fork, ROCm/rccl src/device/common.h) adds ncclDevKernel_Generic_1/_2/_4
// (unroll variants) and ncclDevKernelDebug_…: read as 'other'. CUPTI stores
// the mangled symbol (`_Z39ncclDevKernel_AllReduce_Sum_f32_RING_LL24ncclDevKernelArgsStorageILm4096EE`),
// Kineto and Nsight Systems the demangled one
// (`ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevKernelArgsStorage<4096ul>)`):
// both read the same. Any other kernel whose function name starts with
// `nccl` is communication of collective 'other', as Holistic Trace
// Analysis counts it (hta/common/types.py, CommunicateKernelGroupingPattern
// `^nccl.*`). NCCL runs all-to-all (and gather, scatter) in its SendRecv
// kernel, so a kernel name never says 'all-to-all'; NCCL's NVTX ranges do.
//
// NCCL's NVTX ranges (domain NCCL) wrap each of its API calls, named after
// the call (src/include/nvtx.h: the range of `__func__`, so `ncclAllReduce`,
// `ncclAlltoAll`, `ncclSend`, …), and since 2.19 carry the call's parameters
// as an NVTX payload (src/include/nvtx_payload_schemas.h; the recording's
// nvtx_ranges.payload, SCHEMA.md "NVTX payloads"): the message size in
// bytes among them. A call outside a group launches its kernel before it
// returns (ncclEnqueueCheck → ncclGroupEndInternal → cuLaunchKernelEx), so
// the launch lies inside the call's range, on its thread; inside
// ncclGroupStart … ncclGroupEnd the calls only enqueue, and the launch lies
// inside ncclGroupEnd's range, for the group's calls. A kernel whose launch
// lies in such a range takes its collective from the call (the kernel's name
// where the calls are not of one kind) and its bytes from the payloads.
import type { Collective, CommKernel } from '../contract/communication.ts';

/**
 * The function's name in a kernel name as stored: `_Z<length><name>…`
 * (a mangled function at global scope, as NCCL's kernels are), or a
 * demangled declaration without its return type, template arguments and
 * parameters.
 */
export function kernelSymbol(name: string): string {
  const mangled = /^_ZL?(\d+)/.exec(name);
  if (mangled) {
    const from = mangled[0].length;
    return name.slice(from, from + Number(mangled[1]));
  }
  let s = name.trim();
  if (s.startsWith('void ')) s = s.slice(5);
  const cut = s.search(/[(<]/);
  return (cut >= 0 ? s.slice(0, cut) : s).trim();
}

const COLLECTIVE_OF: Record<string, Collective> = {
  AllReduce: 'all-reduce',
  AllGather: 'all-gather',
  AllGatherV: 'all-gather',
  ReduceScatter: 'reduce-scatter',
  Reduce: 'reduce',
  Broadcast: 'broadcast',
  SendRecv: 'send-recv',
};
/** The collectives whose kernels carry a reduction and a data type that mean something. */
const REDUCING = new Set(['AllReduce', 'Reduce', 'ReduceScatter']);
const PROTOCOLS = new Set(['LL', 'LL128', 'SIMPLE']);
/** NCCL 2.8–2.18 name the C type; everything else uses NCCL's short names (generate.py all_tys). */
const SHORT_TYPE: Record<string, string> = {
  int8_t: 'i8',
  uint8_t: 'u8',
  int32_t: 'i32',
  uint32_t: 'u32',
  int64_t: 'i64',
  uint64_t: 'u64',
  half: 'f16',
  float: 'f32',
  double: 'f64',
  __nv_bfloat16: 'bf16',
  __nv_fp8_e4m3: 'f8e4m3',
  __nv_fp8_e5m2: 'f8e5m2',
};
const OLD_ALGORITHM: Record<string, string> = { Ring: 'RING', Tree: 'TREE', CollNet: 'COLLNET' };

/** NCCL ≥ 2.19: ncclDevKernel_<Coll>[_<Redop>_<ty>]_<ALGO>_<PROTO>, ncclDevKernel_SendRecv, ncclDevKernel_Generic. */
function devKernel(sym: string): CommKernel | null {
  const m = /^ncclDevKernel(?:Debug)?_([A-Za-z]+)(?:_(.*))?$/.exec(sym);
  if (!m) return null;
  const coll = m[1]!;
  if (coll === 'Generic') return { collective: 'other' };
  const collective = COLLECTIVE_OF[coll];
  if (!collective) return null;
  const t = m[2] ? m[2].split('_') : [];
  const proto = t.at(-1);
  if (coll === 'SendRecv' || !proto || !PROTOCOLS.has(proto)) return { collective };
  if (REDUCING.has(coll)) {
    if (t.length < 4) return { collective };
    return { collective, algorithm: t.slice(2, -1).join('_'), protocol: proto, dtype: t[1]!, op: t[0]!.toLowerCase() };
  }
  if (t.length < 2) return { collective };
  return { collective, algorithm: t.slice(0, -1).join('_'), protocol: proto };
}

/** NCCL ≥ 2.27, symmetric memory: ncclSym[k]DevKernel_<Coll>_<algo>[_<red>_<ty>]. */
function symKernel(sym: string): CommKernel | null {
  const m = /^ncclSymk?DevKernel_([A-Za-z]+)_(.+)$/.exec(sym);
  if (!m) return null;
  const collective = COLLECTIVE_OF[m[1]!];
  if (!collective) return null;
  const t = m[2]!.split('_');
  if (REDUCING.has(m[1]!) && t.length >= 3) {
    return { collective, algorithm: t.slice(0, -2).join('_'), dtype: t.at(-1)!, op: t.at(-2)!.toLowerCase() };
  }
  return { collective, algorithm: m[2]! };
}

/** NCCL 2.8–2.18: ncclKernel_<Func>_<ALGO>_<PROTO>_<Redop>_<C type>. */
function kernel28(sym: string): CommKernel | null {
  const m = /^ncclKernel_([A-Za-z]+)_(.+)$/.exec(sym);
  if (!m) return null;
  const coll = m[1]!;
  const collective = COLLECTIVE_OF[coll];
  if (!collective) return null;
  if (coll === 'SendRecv') return { collective };
  const t = m[2]!.split('_');
  const p = t.findIndex((x, k) => k > 0 && PROTOCOLS.has(x));
  if (p < 0) return { collective };
  const info: CommKernel = { collective, algorithm: t.slice(0, p).join('_'), protocol: t[p]! };
  if (REDUCING.has(coll) && t.length > p + 2) {
    const type = t.slice(p + 2).join('_');
    info.dtype = SHORT_TYPE[type] ?? type;
    info.op = t[p + 1]!.toLowerCase();
  }
  return info;
}

/** NCCL 2.3–2.7: nccl<Coll>[Ring|Tree|CollNet][LL|LL128]Kernel_<op>_<ty>. */
function kernel23(sym: string): CommKernel | null {
  const m = /^nccl(AllReduce|AllGather|ReduceScatter|Reduce|Broadcast|SendRecv)(Ring|Tree|CollNet)?(LL128|LL)?Kernel_([a-z]+)_([a-z0-9]+)$/.exec(sym);
  if (!m) return null;
  const coll = m[1]!;
  const collective = COLLECTIVE_OF[coll]!;
  if (coll === 'SendRecv') return { collective };
  const info: CommKernel = { collective };
  if (m[2]) info.algorithm = OLD_ALGORITHM[m[2]]!;
  // The kernel without LL in its name is the simple protocol's (2.3; declared only, from 2.4).
  info.protocol = m[3] ?? 'SIMPLE';
  if (REDUCING.has(coll)) {
    info.dtype = m[5]!;
    info.op = m[4]!;
  }
  return info;
}

/**
 * The collective an NCCL kernel runs, with the variant its name gives;
 * null for a kernel that is not communication. `name` as stored (mangled)
 * or demangled.
 */
export function commKernelOf(name: string): CommKernel | null {
  const sym = kernelSymbol(name);
  if (!sym.startsWith('nccl')) return null;
  return devKernel(sym) ?? symKernel(sym) ?? kernel28(sym) ?? kernel23(sym) ?? { collective: 'other' };
}

// ---------------------------------------------------------------------------
// NCCL's API calls, as its NVTX ranges name them

/** NCCL's NVTX domain (nvtx.h: nccl_domain). */
export const NCCL_DOMAIN = 'NCCL';
/** The payload entry NCCL names the message size with (nvtx_payload_schemas.h: nccl_nvtxMsgSizeStr). */
export const NCCL_MESSAGE_SIZE = 'Message size [bytes]';

/** The collective of each NCCL call that launches one (NCCL 2.28 has ncclAlltoAll, ncclGather, ncclScatter). */
const COLLECTIVE_OF_CALL: Record<string, Collective> = {
  ncclAllReduce: 'all-reduce',
  ncclAllGather: 'all-gather',
  ncclReduceScatter: 'reduce-scatter',
  ncclReduce: 'reduce',
  ncclBroadcast: 'broadcast',
  ncclBcast: 'broadcast',
  ncclAlltoAll: 'all-to-all',
  ncclAllToAll: 'all-to-all',
  ncclGather: 'gather',
  ncclScatter: 'scatter',
  ncclSend: 'send-recv',
  ncclRecv: 'send-recv',
};
/** The calls that open and close a group: inside one, NCCL's calls only enqueue, and ncclGroupEnd launches. */
export const GROUP_START = 'ncclGroupStart';
export const GROUP_END = 'ncclGroupEnd';

/** The collective an NCCL API call (its NVTX range's name) runs, or null for a call that runs none. */
export function collectiveOfCall(name: string): Collective | null {
  return COLLECTIVE_OF_CALL[name] ?? null;
}
