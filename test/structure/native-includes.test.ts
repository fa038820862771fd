// The native folders' include rules (scripts/check-native-includes.ts, run by
// scripts/check-imports.ts): the collector and the addon share the record
// format header and nothing else.
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { includeBreaks } from '../../scripts/check-native-includes.ts';
import { tempDir } from '../helpers/native.ts';

describe('native include rules', () => {
  it('the tree breaks none', () => {
    expect(includeBreaks()).toEqual([]);
  });

  it('finds a wrong include, the shared header growing and an include its build would not find, and lets allowed ones pass', () => {
    const root = tempDir('native-includes');
    const write = (rel: string, text: string) => {
      fs.mkdirSync(path.dirname(path.join(root, rel)), { recursive: true });
      fs.writeFileSync(path.join(root, rel), text);
    };
    // Allowed: the collector's own headers, the addon's record_format.h through its include directory, the fuzz
    // targets' encoder, and headers of the system (<…>).
    write('native/collector/record_encoder.h', '#pragma once\n#include "record_format.h"\n#include <cstdint>\n');
    write('native/collector/stream_writer.cc', '#include "record_encoder.h"\n#include "../addon/src/ingest.h"\n');
    write('native/addon/src/ingest.h', '#pragma once\n#include "record_format.h"\n#include <napi.h>\n');
    write('native/addon/src/ingest.cc', '#include "ingest.h"\n  #  include "record_encoder.h"\n#include "missing.h"\n');
    write('native/addon/build/Release/generated.cc', '#include "record_encoder.h"\n'); // build output: not checked
    write('native/fuzz/round_trip_fuzzer.cc', '#include "ingest.h"\n#include "record_encoder.h"\n');
    write('native/workloads/runner.cu', '#include "../collector/record_format.h"\n');
    // The shared header including another of the collector's would share that one too.
    write('native/collector/record_format.h', '#pragma once\n#include "collector_version.h"\n');
    write('native/collector/collector_version.h', '#pragma once\n');
    expect(includeBreaks(root)).toEqual([
      'native/addon/src/ingest.cc -> "missing.h" (not found in its folder or its include directories)',
      'native/addon/src/ingest.cc -> native/collector/record_encoder.h',
      'native/collector/record_format.h -> native/collector/collector_version.h',
      'native/collector/stream_writer.cc -> native/addon/src/ingest.h',
      'native/workloads/runner.cu -> native/collector/record_format.h',
    ]);
    fs.rmSync(root, { recursive: true, force: true });
  });
});
