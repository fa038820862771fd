// One import of one input file in the sandbox, and what is wrong with it
// (outcome.ts's property for files, plus: a failed import leaves nothing
// beside its output, and a successful one leaves a recording that
// `streamscope report` reads).
import fs from 'node:fs';
import path from 'node:path';
import type { ImportInput, ImportOutcome } from '../handlers/import.ts';
import { fileProblem, outcomeProblem, sha256 } from './outcome.ts';
import { Sandbox } from './sandbox.ts';

export type ImportFormat = ImportInput['format'];

export function importSandbox(): Sandbox<ImportInput, ImportOutcome> {
  return new Sandbox(new URL('../handlers/import.ts', import.meta.url), { timeoutMs: 30_000 });
}

export async function importProblem(sandbox: Sandbox<ImportInput, ImportOutcome>, file: string, format: ImportFormat, work: string): Promise<string | null> {
  const before = sha256(file);
  const outDir = fs.mkdtempSync(path.join(work, 'out-'));
  try {
    const answer = await sandbox.run({ file, out: path.join(outDir, 'imported.sqlite'), format });
    const problem = fileProblem(file, answer, fs.existsSync(file) && sha256(file) === before);
    if (problem || answer.kind !== 'answer') return problem;
    const o = answer.value;
    if (o.leftovers) return `${o.ok ? 'a successful' : 'a failed'} import left files behind: ${o.leftovers.join(', ')}`;
    if (o.reportProblem) return `imported, but the recording does not read: ${outcomeProblem('(imported)', o.reportProblem)}`;
    return null;
  } finally {
    fs.rmSync(outDir, { recursive: true, force: true });
  }
}

/** `--format` a saved input is imported with, from its name: x.kineto.json, x.chrome.json, x.nsys.sqlite; detected otherwise. */
export function formatOfName(file: string): ImportFormat {
  return /\.(kineto|chrome|nsys)\.[a-z]+$/.exec(file)?.[1] as ImportFormat;
}
