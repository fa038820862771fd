// mapFile and writeFileDirect (native/addon/src/file_map.cc): ArrayBuffers
// over a file's bytes without a copy, and a file written around the page
// cache, for the column cache (analysis/load/column-cache.ts).
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { mapFile, writeFileDirect } from '../../profiler/native/addon.ts';

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

describe('writeFileDirect', () => {
  it('writes each piece at its offset, zeros after it to the next 4 KiB, the file as long as asked', async () => {
    const file = path.join(dir, 'written.bin');
    const doubles = Float64Array.from({ length: 1000 }, (_, i) => i * 1.5);
    const shared = new Int32Array(new SharedArrayBuffer(4 * 3000)).fill(-7).subarray(1000, 2000);
    await writeFileDirect(
      file,
      [
        { data: Buffer.from('header'), offset: 0 },
        { data: doubles, offset: 4096 },
        { data: shared, offset: 16_384 },
      ],
      24_576,
    );
    const got = fs.readFileSync(file);
    expect(got.length).toBe(24_576);
    expect(got.subarray(0, 6).toString()).toBe('header');
    expect(got.subarray(6, 4096).every((b) => b === 0)).toBe(true);
    expect(new Float64Array(got.buffer, got.byteOffset + 4096, 1000)).toEqual(doubles);
    expect(got.subarray(4096 + 8000, 16_384).every((b) => b === 0)).toBe(true);
    expect(Array.from(new Int32Array(got.buffer, got.byteOffset + 16_384, 1000))).toEqual(Array(1000).fill(-7));
    // And it maps back as written.
    const [back] = mapFile(file, [{ offset: 4096, bytes: 8000 }])!;
    expect(new Float64Array(back!)).toEqual(doubles);
  });

  it('refuses pieces off 4 KiB, overlapping or past the length; a file it cannot create rejects naming it', async () => {
    const file = path.join(dir, 'refused.bin');
    const page = new Uint8Array(4096);
    expect(() => writeFileDirect(file, [{ data: page, offset: 100 }], 8192)).toThrow(/multiple of 4096/);
    expect(() =>
      writeFileDirect(
        file,
        [
          { data: page, offset: 0 },
          { data: page, offset: 0 },
        ],
        8192,
      ),
    ).toThrow(/after the piece before/);
    expect(() => writeFileDirect(file, [{ data: new Uint8Array(4097), offset: 4096 }], 8192)).toThrow(/ends past length/);
    expect(() => writeFileDirect(file, [], 100)).toThrow(/length must be a multiple of 4096/);
    await expect(writeFileDirect(path.join(dir, 'no-such-dir', 'x.bin'), [{ data: page, offset: 0 }], 4096)).rejects.toThrow(
      /no-such-dir\/x\.bin: cannot create/,
    );
  });
});
