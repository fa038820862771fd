// Every input a TypeScript fuzz target ever failed on, kept under
// test/fixtures/fuzz/<target>/ (`npm run fuzz` copies new ones there),
// replayed through the same check the target runs: each must now pass.
// Besides, the reports of the recordings among them as a user gets them,
// from the `streamscope` command itself.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { apiProblem, apiSandbox, loadApiInput } from './lib/api-check.ts';
import { workDir } from './lib/harness.ts';
import { formatOfName, importProblem, importSandbox } from './lib/import-check.ts';
import { reportProblem, reportSandbox } from './lib/report-check.ts';
import { httpRequestProblem, httpRequestsSandbox, loadRawRequest } from './targets/http-requests.ts';
import { valueRecipeProblem, type ValueRecipe } from './targets/recording-values.ts';

const repo = path.resolve(import.meta.dirname, '../..');
const corpus = path.join(repo, 'test/fixtures/fuzz');
const work = workDir('regressions');
afterAll(() => fs.rmSync(work, { recursive: true, force: true }));

/**
 * The kept inputs of a target (README and dotfiles aside); `open`: those
 * of its open/ folder, whose defect is not fixed yet (fixtures/fuzz/README.md).
 */
function inputs(target: string, open = false): string[] {
  const dir = path.join(corpus, target, ...(open ? ['open'] : []));
  if (!fs.existsSync(dir)) return [];
  return fs
    .readdirSync(dir, { withFileTypes: true })
    .filter((f) => f.isFile() && !f.name.startsWith('.') && !/\.md$/i.test(f.name))
    .map((f) => path.join(dir, f.name))
    .sort();
}

/** A copy to work on: a recording of an older schema is migrated in place when read. */
function copyOf(file: string): string {
  const copy = path.join(work, path.basename(file));
  fs.copyFileSync(file, copy);
  return copy;
}

describe('import-json: Chrome-trace JSON the importers once failed on', () => {
  const sandbox = importSandbox();
  afterAll(() => sandbox.close());
  it.each(inputs('import-json').map((f) => [path.basename(f), f]))('%s', async (_, file) => {
    expect(await importProblem(sandbox, copyOf(file), formatOfName(file), work)).toBeNull();
  });
});

describe('import-nsys: Nsight Systems exports the importer once failed on', () => {
  const sandbox = importSandbox();
  afterAll(() => sandbox.close());
  it.each(inputs('import-nsys').map((f) => [path.basename(f), f]))('%s', async (_, file) => {
    expect(await importProblem(sandbox, copyOf(file), formatOfName(file), work)).toBeNull();
  });
});

describe('recording-values: values the reader once read as clean (their recipes, made again from the fixtures)', () => {
  const sandbox = reportSandbox();
  afterAll(() => sandbox.close());
  it.each(inputs('recording-values').map((f) => [path.basename(f), f]))('%s', async (_, file) => {
    const recipe = JSON.parse(fs.readFileSync(file, 'utf8')) as ValueRecipe;
    expect(await valueRecipeProblem(sandbox, recipe, path.join(work, `${path.basename(file, '.json')}.sqlite`))).toBeNull();
  });
});

describe('recording-report: recordings the reader once failed on', () => {
  const sandbox = reportSandbox();
  afterAll(() => sandbox.close());
  const files = inputs('recording-report');
  it.each(files.map((f) => [path.basename(f), f]))('%s', async (_, file) => {
    expect(await reportProblem(sandbox, copyOf(file), /\.whole\.sqlite$/.test(file))).toBeNull();
  });

  // Defects found and not fixed yet, listed with whose code they are in fixtures/fuzz/README.md.
  for (const file of inputs('recording-report', true)) it.todo(`open: ${path.basename(file)}`);

  it('`streamscope report` says what is wrong with each in one line naming it (exit 2), or reports it', () => {
    const cli = path.join(repo, 'profiler/cli/streamscope.ts');
    for (const file of files) {
      const copy = copyOf(file);
      const r = spawnSync(process.execPath, [cli, 'report', copy, '--json', ...(/\.whole\./.test(file) ? ['--whole'] : [])], {
        encoding: 'utf8',
        timeout: 60_000,
      });
      if (r.status === 0) {
        expect(() => JSON.parse(r.stdout), path.basename(file)).not.toThrow();
        continue;
      }
      expect(r.status, `${path.basename(file)}: ${r.stderr}`).toBe(2);
      expect(r.stderr, path.basename(file)).toMatch(new RegExp(`^streamscope: ${copy.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}: [^\n]+\n$`));
    }
  });
});

describe.each(['http', 'ipc'] as const)('api-%s: calls the API once answered wrongly', (transport) => {
  const sandbox = apiSandbox(transport);
  afterAll(() => sandbox.close());
  it.each(inputs(`api-${transport}`).map((f) => [path.basename(f), f]))('%s', async (_, file) => {
    const input = loadApiInput(file);
    expect(apiProblem(transport, input, await sandbox.run(input))).toBeNull();
  });
});

describe('http-requests: bytes on a connection the server once answered wrongly', () => {
  const sandbox = httpRequestsSandbox();
  afterAll(() => sandbox.close());
  it.each(inputs('http-requests').map((f) => [path.basename(f), f]))('%s', async (_, file) => {
    const input = loadRawRequest(file);
    expect(httpRequestProblem(input, await sandbox.run(input))).toBeNull();
  });
});
