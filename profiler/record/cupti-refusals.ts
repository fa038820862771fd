// A profiler inside the target (torch.profiler's Kineto, say) asks CUPTI
// for the process's one subscription after StreamScope's collector took it
// at cuInit, is refused, and records no GPU activity; left alone, all the
// user sees is that profiler's own warning. The library the recorder
// preloads (native/collector/cupti_watch.cc) writes one line per refused
// subscription, `pid \t library \t subscriber name`, to
// cupti-refused-<pid>.txt in the stream directory; these become notes of
// the recording, printed by `record` and shown by `report`.
import fs from 'node:fs';
import path from 'node:path';

export function cuptiRefusalNotes(streamDir: string): string[] {
  let names: string[];
  try {
    names = fs.readdirSync(streamDir).filter((n) => /^cupti-refused-\d+\.txt$/.test(n));
  } catch {
    return [];
  }
  const notes: string[] = [];
  for (const name of names.sort()) {
    let text: string;
    try {
      text = fs.readFileSync(path.join(streamDir, name), 'utf8');
    } catch {
      continue;
    }
    // One note per process and calling library, however often it retried.
    const seen = new Set<string>();
    for (const line of text.split('\n')) {
      const [pid, library, subscriber] = line.split('\t');
      if (!pid || !library || seen.has(library)) continue;
      seen.add(library);
      const who = subscriber ? `"${subscriber}" (${path.basename(library)})` : path.basename(library);
      notes.push(
        `process ${pid}: a CUPTI client of the target's own, ${who}, was refused because StreamScope holds the process's one CUPTI subscription: ` +
          'that profiler (torch.profiler, say) recorded no GPU activity; this recording has it all. Run that profiler without `streamscope record` to use it',
      );
    }
  }
  return notes;
}
