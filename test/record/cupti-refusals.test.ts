// What the recorder makes of the lines the preloaded watch library
// (native/collector/cupti_watch.cc) leaves when a CUPTI client of the
// target's own is refused: one note per process and calling library. The
// library itself is checked against a fake CUPTI (the "inner-client"
// scenario of native/collector/test/run-fake-cupti-tests.sh) and on a GPU
// (test/gpu/python.test.ts, torch.profiler inside the target).
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { cuptiRefusalNotes } from '../../profiler/record/cupti-refusals.ts';

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cupti-refusals-'));
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

describe('notes of refused CUPTI clients', () => {
  it('one per process and library, however often it retried, naming the library and the subscriber', () => {
    fs.writeFileSync(
      path.join(dir, 'cupti-refused-3313.txt'),
      '3313\t/opt/torch/.venv/lib/python3.12/site-packages/torch/lib/libtorch_cpu.so\t\n3313\t/opt/torch/.venv/lib/python3.12/site-packages/torch/lib/libtorch_cpu.so\t\n',
    );
    fs.writeFileSync(path.join(dir, 'cupti-refused-3400.txt'), '3400\t/x/libfake_client.so\tfake Kineto\n');
    fs.writeFileSync(path.join(dir, 'p3313.ssr'), 'not a note');
    const notes = cuptiRefusalNotes(dir);
    expect(notes).toHaveLength(2);
    expect(notes[0]).toMatch(/^process 3313: a CUPTI client of the target's own, libtorch_cpu\.so, was refused/);
    expect(notes[0]).toMatch(/recorded no GPU activity/);
    expect(notes[1]).toMatch(/^process 3400: .*"fake Kineto" \(libfake_client\.so\)/);
  });

  it('nothing where nothing was refused, or the directory is gone', () => {
    expect(cuptiRefusalNotes(fs.mkdtempSync(path.join(dir, 'empty-')))).toEqual([]);
    expect(cuptiRefusalNotes(path.join(dir, 'missing'))).toEqual([]);
  });
});
