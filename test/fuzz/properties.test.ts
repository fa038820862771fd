// Each TypeScript fuzz target for a few seconds from a fixed seed: the
// properties of test/fuzz (a result or the project's one-line error naming
// the file; the API's documented error shape) checked on every `npm test`,
// on inputs generated afresh from the real fixtures. `npm run fuzz` runs
// the same targets for as long as it is given.
import fs from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import type { FuzzTarget } from './lib/harness.ts';

const SECONDS = 3;
const SEED = 20261124;

const dir = path.join(import.meta.dirname, 'targets');
const targets = fs
  .readdirSync(dir)
  .filter((f) => f.endsWith('.ts'))
  .sort();

describe('fuzz targets, briefly', () => {
  it('include those of test/README.md', () => {
    expect(targets).toEqual(
      expect.arrayContaining(['api-http.ts', 'api-ipc.ts', 'http-requests.ts', 'import-json.ts', 'import-nsys.ts', 'output-paths.ts', 'recording-report.ts']),
    );
  });

  it.each(targets)(`%s: no failure in ${SECONDS} s from seed ${SEED}`, async (file) => {
    const { target } = (await import(pathToFileURL(path.join(dir, file)).href)) as { target: FuzzTarget };
    const result = await target.run({ seconds: SECONDS, seed: SEED });
    expect(result.failures).toEqual([]);
    expect(result.executions).toBeGreaterThan(0);
  });
});
