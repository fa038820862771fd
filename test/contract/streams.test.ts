// A stream's kind from its recorded flags (profiler/contract/streams.ts):
// the one function behind the report's kind column, the timeline's row
// label, the details panel, the SQL views and the findings' prose.
import { describe, expect, it } from 'vitest';
import { StreamFlags, streamKind, streamKindInWords } from '../../profiler/contract/streams.ts';
import type { StreamKind } from '../../profiler/contract/api.ts';

const { LegacyDefault, NonBlocking, PerThreadDefault, Implicit } = StreamFlags;

describe('streamKind', () => {
  it('a stream seen created is blocking unless created cudaStreamNonBlocking', () => {
    expect(streamKind(0)).toBe('blocking');
    expect(streamKind(NonBlocking)).toBe('non-blocking');
    expect(streamKind(PerThreadDefault)).toBe('per-thread-default');
  });

  it('a stream never seen created (an imported trace, one created before tracing) is of unknown kind, not blocking', () => {
    expect(streamKind(Implicit)).toBe('unknown');
    // What its operations or the trace did say still holds.
    expect(streamKind(Implicit | NonBlocking)).toBe('non-blocking');
    expect(streamKind(Implicit | PerThreadDefault)).toBe('per-thread-default');
  });

  it('the legacy default stream is that whatever else is set', () => {
    for (let other = 0; other < 16; other++) expect(streamKind(LegacyDefault | other), `flags ${LegacyDefault | other}`).toBe('legacy-default');
  });

  it('every combination of the bits has a kind, and every kind has its words', () => {
    const kinds = new Set<StreamKind>();
    for (let flags = 0; flags < 16; flags++) kinds.add(streamKind(flags));
    expect([...kinds].sort()).toEqual(['blocking', 'legacy-default', 'non-blocking', 'per-thread-default', 'unknown']);
    expect([...kinds].map((k) => [k, streamKindInWords(k)])).toEqual(
      expect.arrayContaining([
        ['legacy-default', 'legacy default'],
        ['per-thread-default', 'per-thread default'],
        ['unknown', 'kind unknown'],
      ]),
    );
  });
});
