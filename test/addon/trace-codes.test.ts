// The analysis's codes that the native passes over its arrays compare
// against (replay_scheduler.cc, graph_capture.cc, issue_walk.cc) have one
// C++ definition, native/addon/src/trace_codes.h, which repeats the
// TypeScript's (trace.ts, replay-host.ts, replay-resources.ts): a code
// changed on one side only fails here, by name, instead of a replay that
// quietly reads every copy as a kernel.
import { describe, expect, it } from 'vitest';
import { nativeVocabulary } from '../../profiler/native/addon.ts';
import { OpCategory, OpKind } from '../../profiler/analysis/trace.ts';
import { NameClass, PAGEABLE, WaitKind } from '../../profiler/analysis/replay/replay-host.ts';
import { NO_SHARE } from '../../profiler/analysis/replay/replay-resources.ts';

describe('trace codes: trace_codes.h and the TypeScript', () => {
  it('every code the addon compares against is the TypeScript value', () => {
    expect(nativeVocabulary().traceCodes).toEqual({
      kernel: OpKind.Kernel,
      memcpy: OpKind.Memcpy,
      compute: OpCategory.Compute,
      htod: OpCategory.HtoD,
      dtoh: OpCategory.DtoH,
      pageable: PAGEABLE,
      waitNone: WaitKind.None,
      waitOp: WaitKind.Op,
      waitPrefix: WaitKind.Prefix,
      nameOther: NameClass.Other,
      nameDevice: NameClass.Device,
      nameStream: NameClass.Stream,
      nameEvent: NameClass.Event,
      nameImplicit: NameClass.Implicit,
      noShare: NO_SHARE,
    });
  });
});
