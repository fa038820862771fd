// mapFile (native/addon/src/file_map.cc): ArrayBuffers over a file's bytes,
// without a copy, for the column cache (analysis/load/column-cache.ts).
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { mapFile } from '../../profiler/native/addon.ts';

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'file-map-'));
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

describe('mapFile', () => {
  const file = path.join(dir, 'two-pages.bin');
  const bytes = Buffer.alloc(3 * 65_536);
  for (let i = 0; i < bytes.length; i += 8) bytes.writeDoubleLE(i / 8, i);
  fs.writeFileSync(file, bytes);

  it("gives views of the file's bytes at each offset; a write to one stays in this process", () => {
    const [a, b, empty] = mapFile(file, [
      { offset: 0, bytes: 65_536 },
      { offset: 131_072, bytes: 8 * 100 },
      { offset: 65_536, bytes: 0 },
    ])!;
    expect(new Float64Array(a!)[10]).toBe(10);
    expect(new Float64Array(b!).length).toBe(100);
    expect(new Float64Array(b!)[0]).toBe(131_072 / 8);
    expect(empty!.byteLength).toBe(0);
    new Float64Array(a!)[10] = -1;
    expect(new Float64Array(a!)[10]).toBe(-1);
    expect(fs.readFileSync(file).readDoubleLE(80)).toBe(10);
  });

  it('refuses views past the end of the file, offsets off a page, and a file that is not there, naming it', () => {
    expect(() => mapFile(file, [{ offset: 131_072, bytes: 65_537 }])).toThrow(/two-pages\.bin: shorter than its views/);
    expect(() => mapFile(file, [{ offset: 100, bytes: 8 }])).toThrow(/multiple of the page size/);
    expect(() => mapFile(path.join(dir, 'none.bin'), [])).toThrow(/none\.bin: cannot open/);
  });
});
