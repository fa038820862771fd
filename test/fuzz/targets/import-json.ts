// Fuzz target: `streamscope import` of Chrome-trace JSON (the Kineto and
// generic Chrome importers), on real PyTorch profiler traces mutated
// (lib/json-trace.ts). Property: lib/import-check.ts.
import fs from 'node:fs';
import path from 'node:path';
import { fuzz, workDir, type FuzzTarget } from '../lib/harness.ts';
import { importProblem, importSandbox } from '../lib/import-check.ts';
import { jsonRecipe, materialize, type JsonRecipe } from '../lib/json-trace.ts';

const fileName = (stem: string, r: JsonRecipe) => `${stem}${r.format ? `.${r.format}` : ''}.json`;

export const target: FuzzTarget = {
  name: 'import-json',
  async run(options) {
    const work = workDir('import-json');
    const sandbox = importSandbox();
    let n = 0;
    try {
      return await fuzz(
        {
          name: 'import-json',
          arbitrary: jsonRecipe,
          async check(r) {
            const file = path.join(work, fileName(`input-${n++}`, r));
            fs.writeFileSync(file, materialize(r));
            try {
              return await importProblem(sandbox, file, r.format ?? undefined, work);
            } finally {
              fs.rmSync(file, { force: true });
            }
          },
          save(r, dir, stem) {
            const file = path.join(dir, fileName(stem, r));
            fs.writeFileSync(file, materialize(r));
            return file;
          },
        },
        options,
      );
    } finally {
      await sandbox.close();
      fs.rmSync(work, { recursive: true, force: true });
    }
  },
};
