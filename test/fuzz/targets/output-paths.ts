// Fuzz target: where the commands that write a file write it (issue 27):
// export, import, ingest and merge of real inputs, to an output that is
// absent, exists, is an input or a link to one, a link elsewhere, a
// directory, in a missing folder; with --force or not, one writer or two at
// once, temporaries of a dead and a live writer beside it. Property:
// lib/output-check.ts.
import fs from 'node:fs';
import path from 'node:path';
import { exportChromeTrace } from '../../../profiler/export/chrome-trace.ts';
import { openRecording } from '../../../profiler/store/database.ts';
import { fuzz, workDir, type FuzzTarget, saveJson } from '../lib/harness.ts';
import { outputProblem, outputRecipe, outputSandbox, type OutputFixtures } from '../lib/output-check.ts';

const fixtures = path.resolve(import.meta.dirname, '../../fixtures');

export const target: FuzzTarget = {
  name: 'output-paths',
  async run(options) {
    const work = workDir('output-paths');
    const sandbox = outputSandbox();
    try {
      // Small real inputs, so that a case costs its paths, not its rows: a recording of 32 GPU operations, its trace, an H100's stream.
      const inputs: OutputFixtures = {
        recording: path.join(fixtures, 'recordings/matmul-serial.sqlite'),
        trace: path.join(work, 'trace.json'),
        stream: path.join(fixtures, 'streams/torch_streams-h100.ssr'),
      };
      const db = openRecording(inputs.recording, { readonly: true });
      try {
        await exportChromeTrace(db, inputs.trace);
      } finally {
        db.close();
      }
      return await fuzz(
        {
          name: 'output-paths',
          arbitrary: outputRecipe,
          check: (r) => outputProblem(sandbox, r, inputs, work),
          save: saveJson,
        },
        options,
      );
    } finally {
      await sandbox.close();
      fs.rmSync(work, { recursive: true, force: true });
    }
  },
};
