// What is wrong with an API call's answer (handlers/api.ts): a rejection
// must be the documented shape (contract/api.ts ApiErrorShape: a known
// code, a one-line message, the file when there is one, nothing else),
// never an internal error (HTTP 500) or an exception out of the IPC
// dispatcher; arguments the contract's checks refuse must be refused as a
// bad request with the checks' own message, before anything else runs; and
// the server must answer at all. Plus the file a call is saved as: JSON
// with NaN, ±Infinity, -0, undefined and bigints tagged, so that a replay
// sends exactly the values that failed.
import fs from 'node:fs';
import path from 'node:path';
import { API_ERROR_CODES } from '../../../profiler/query/api-error.ts';
import type { ApiAnswer, ApiInput, Transport } from '../handlers/api.ts';
import { apiInput } from './api-input.ts';
import { fuzz, type FuzzTarget } from './harness.ts';
import type { SandboxAnswer } from './sandbox.ts';
import { Sandbox } from './sandbox.ts';

export function apiSandbox(transport: Transport): Sandbox<ApiInput, ApiAnswer> {
  return new Sandbox(new URL('../handlers/api.ts', import.meta.url), { timeoutMs: 30_000, setup: { transport } });
}

/** Codes an answer may carry: the API's (the renderer shows one message per code). */
const CODES = new Set<string>([...API_ERROR_CODES, 'not-mergeable']);

function shapeProblem(e: unknown): string | null {
  if (!e || typeof e !== 'object' || Array.isArray(e)) return `the error is not an object: ${JSON.stringify(e)?.slice(0, 100)}`;
  const { code, message, file, ...rest } = e as Record<string, unknown>;
  if (typeof code !== 'string' || !CODES.has(code)) return `the error's code ${JSON.stringify(code)} is not one of the API's`;
  if (typeof message !== 'string' || message === '') return `the error (${code}) has no message`;
  if (/[\r\n]/.test(message)) return `the error's message (${code}) is not one line: ${message.split('\n')[0]!.slice(0, 120)}`;
  if (file !== undefined && typeof file !== 'string') return `the error's file is not a string`;
  if (Object.keys(rest).length) return `the error has fields the shape does not: ${Object.keys(rest).join(', ')}`;
  if (code === 'internal') return `an internal error: ${message.slice(0, 200)}`;
  return null;
}

export function apiProblem(transport: Transport, input: ApiInput, a: SandboxAnswer<ApiAnswer>): string | null {
  if (a.kind === 'hang') return `hang: no answer to ${input.method} within ${a.ms} ms`;
  if (a.kind === 'died') return `the ${transport === 'http' ? 'server' : 'main process'} died on ${input.method}: ${a.message}`;
  const r = a.value;
  if (transport === 'http') {
    if (r.status === undefined) return 'no HTTP answer';
    if (r.body === undefined) return `${input.method}: status ${r.status} with a body that is not JSON: ${r.rawBody}`;
    if (r.status === 200) {
      if (r.expected !== null) return `${input.method}: answered 200 to arguments the checks refuse (${r.expected})`;
      return null;
    }
    const problem = shapeProblem(r.body);
    if (problem) return `${input.method}: status ${r.status}: ${problem}`;
    if (r.status >= 500) return `${input.method}: status ${r.status} (${(r.body as { code: string }).code})`;
    const code = (r.body as { code: string }).code;
    // Checked arguments: a request with the token, POSTed (a GET is refused first).
    if (r.expected !== null && !input.token && !input.get && (code !== 'bad-request' || (r.body as { message: string }).message !== r.expected)) {
      return `${input.method}: arguments the checks refuse (${r.expected}) answered ${r.status} ${code}`;
    }
    return null;
  }
  if (r.threw) return `dispatch threw: ${r.threw.split('\n')[0]}`;
  const env = r.envelope as { ok?: unknown; value?: unknown; error?: unknown } | undefined;
  if (!env || typeof env !== 'object' || typeof env.ok !== 'boolean') return `not an IPC envelope: ${JSON.stringify(env)?.slice(0, 100)}`;
  if (env.ok) return r.expected !== null ? `${input.method}: answered arguments the checks refuse (${r.expected})` : null;
  const problem = shapeProblem(env.error);
  if (problem) return `${input.method}: ${problem}`;
  const e = env.error as { code: string; message: string };
  if (r.expected !== null && (e.code !== 'bad-request' || e.message !== r.expected))
    return `${input.method}: arguments the checks refuse (${r.expected}) answered ${e.code}`;
  return null;
}

/** The fuzz target of one transport: generated calls (api-input.ts), each answer checked. */
export function apiTarget(transport: Transport): FuzzTarget {
  const name = `api-${transport}`;
  return {
    name,
    async run(options) {
      const sandbox = apiSandbox(transport);
      try {
        return await fuzz(
          {
            name,
            arbitrary: apiInput(transport),
            check: async (input) => apiProblem(transport, input, await sandbox.run(input)),
            save: saveApiInput,
          },
          options,
        );
      } finally {
        await sandbox.close();
      }
    },
  };
}

// ---- saved inputs -------------------------------------------------------------

type Tagged = { $undefined: 1 } | { $number: string } | { $bigint: string };

function encode(v: unknown): unknown {
  if (v === undefined) return { $undefined: 1 };
  if (typeof v === 'number') return Number.isFinite(v) && !Object.is(v, -0) ? v : { $number: Object.is(v, -0) ? '-0' : String(v) };
  if (typeof v === 'bigint') return { $bigint: String(v) };
  if (Array.isArray(v)) return v.map(encode);
  if (v && typeof v === 'object') return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, encode(x)]));
  return v;
}

function decode(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(decode);
  if (v && typeof v === 'object') {
    const t = v as Tagged;
    if ('$undefined' in t) return undefined;
    if ('$number' in t) return t.$number === '-0' ? -0 : Number(t.$number);
    if ('$bigint' in t) return BigInt(t.$bigint);
    return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, decode(x)]));
  }
  return v;
}

export function saveApiInput(input: ApiInput, dir: string, stem: string): string {
  const file = path.join(dir, `${stem}.json`);
  fs.writeFileSync(file, JSON.stringify(encode(input), null, 1) + '\n');
  return file;
}

export function loadApiInput(file: string): ApiInput {
  return decode(JSON.parse(fs.readFileSync(file, 'utf8'))) as ApiInput;
}
