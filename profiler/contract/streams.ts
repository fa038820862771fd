// What kind of CUDA stream a recorded stream is, read from its flags: the one
// wording the report, the timeline's row labels, the details panel, the SQL
// views' stream_kind and the Chrome trace export all use.
import type { StreamKind } from './api.ts';

/**
 * streams.flags bits; the record stream's StreamFlags
 * (native/collector/record_format.h), held to these values by
 * test/contract/shared-constants.test.ts. Stored: never renumber.
 */
export const StreamFlags = { LegacyDefault: 1, NonBlocking: 2, PerThreadDefault: 4, Implicit: 8 } as const;

/**
 * The stream's kind by its flags. The legacy default (NULL) stream
 * synchronizes implicitly with every blocking stream of its context; a
 * stream created with cudaStreamNonBlocking does not, one created without
 * it (cudaStreamCreate) is blocking. A stream seen only through its
 * operations (Implicit: created before tracing began, or any stream of an
 * imported trace, which records no creation flags) was never seen created,
 * so whether it blocks is unknown — calling it blocking would claim an
 * implicit synchronization no one saw (PyTorch's own streams are
 * non-blocking). The legacy default stream is known as such even then.
 */
export function streamKind(flags: number): StreamKind {
  if (flags & StreamFlags.LegacyDefault) return 'legacy-default';
  if (flags & StreamFlags.NonBlocking) return 'non-blocking';
  if (flags & StreamFlags.PerThreadDefault) return 'per-thread-default';
  if (flags & StreamFlags.Implicit) return 'unknown';
  return 'blocking';
}

const IN_WORDS: Record<StreamKind, string> = {
  'legacy-default': 'legacy default',
  'per-thread-default': 'per-thread default',
  'non-blocking': 'non-blocking',
  blocking: 'blocking',
  unknown: 'kind unknown',
};

/** The kind in a sentence (a finding's "stream 7 (legacy default)", a Chrome trace's thread name): the same kind, as words. */
export function streamKindInWords(kind: StreamKind): string {
  return IN_WORDS[kind];
}
