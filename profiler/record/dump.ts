// `streamscope dump-stream`: a record stream as text, for debugging the
// collector. Uses the reference decoder.
import fs from 'node:fs';
import { decodeStream } from './decoder.ts';

export function dumpStream(file: string, json: boolean): string {
  const s = decodeStream(new Uint8Array(fs.readFileSync(file)), file);
  if (json) {
    return JSON.stringify(s, (_k, v) => (typeof v === 'bigint' ? v.toString() : v), 2) + '\n';
  }
  const lines = [`${file}: format ${s.header.format_version}, pid ${s.header.pid}, origin ${s.header.origin_ns} ns, ${s.records.length} records`];
  const strings = new Map<number, string>();
  for (const r of s.records) {
    const { kind, offset, ...fields } = r;
    if (r.kind === 'String') strings.set(r.id, r.value);
    // A ProcessEnv record is read as the variable it holds: RANK="3".
    const env = r.kind === 'ProcessEnv' ? ` ${strings.get(r.name_sid as number) ?? '?'}=${JSON.stringify(strings.get(r.value_sid as number) ?? '?')}` : '';
    lines.push(
      `@${offset} ${kind} ${Object.entries(fields)
        .map(([k, v]) => `${k}=${typeof v === 'string' ? JSON.stringify(v) : v}`)
        .join(' ')}${env}`,
    );
  }
  if (s.truncated) lines.push(`truncated at byte ${s.truncated.atByte} (${s.truncated.missingBytes} bytes missing)`);
  return lines.join('\n') + '\n';
}
