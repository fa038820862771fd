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
  for (const r of s.records) {
    const { kind, offset, ...fields } = r;
    lines.push(
      `@${offset} ${kind} ${Object.entries(fields)
        .map(([k, v]) => `${k}=${typeof v === 'string' ? JSON.stringify(v) : v}`)
        .join(' ')}`,
    );
  }
  if (s.truncated) lines.push(`truncated at byte ${s.truncated.atByte} (${s.truncated.missingBytes} bytes missing)`);
  return lines.join('\n') + '\n';
}
