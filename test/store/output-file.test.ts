// The output module itself (profiler/store/output-file.ts), for what the
// CLI runs of test/cli/output-files.test.ts cannot reach: two writers of
// one output inside one process (the app's threads), this process's own
// temporaries, a temporary emptied for a writer that starts over.
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { beginOutput, OutputRefusedError, removeStaleTemporaries, temporaryName } from '../../profiler/store/output-file.ts';
import { tempDir } from '../helpers/native.ts';

const dir = tempDir('output-file');
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

describe('beginOutput', () => {
  it('two writers of one new output in one process: each its own temporary; the first published, the second refused and its temporary gone', () => {
    const out = path.join(dir, 'twice.json');
    const a = beginOutput(out);
    const b = beginOutput(out);
    expect(a.temp).not.toBe(b.temp);
    fs.writeFileSync(a.temp, 'a');
    fs.writeFileSync(b.temp, 'b');
    a.publish();
    const lost = (() => {
      try {
        b.publish();
      } catch (err) {
        return err;
      }
    })();
    expect(lost).toBeInstanceOf(OutputRefusedError);
    expect((lost as Error).message).toBe(`${out}: already exists: another command wrote it meanwhile (use --force to overwrite)`);
    expect(fs.readFileSync(out, 'utf8')).toBe('a');
    expect(fs.readdirSync(dir)).toEqual(['twice.json']);
  });

  it('with overwrite, both publish and the last one wins', () => {
    const out = path.join(dir, 'forced.json');
    const a = beginOutput(out, { overwrite: true });
    const b = beginOutput(out, { overwrite: true });
    fs.writeFileSync(a.temp, 'a');
    fs.writeFileSync(b.temp, 'b');
    a.publish();
    b.publish();
    expect(fs.readFileSync(out, 'utf8')).toBe('b');
    expect(fs.readdirSync(dir).filter((f) => f.includes('forced'))).toEqual(['forced.json']);
  });

  it("never removes this process's own temporaries (another thread of it may be writing)", () => {
    const out = path.join(dir, 'own.json');
    const writing = beginOutput(out);
    const leftover = temporaryName(out, process.pid, 99);
    fs.writeFileSync(leftover, '');
    expect(removeStaleTemporaries(out)).toEqual([]);
    expect(fs.existsSync(writing.temp) && fs.existsSync(leftover)).toBe(true);
    writing.discard();
    fs.rmSync(leftover);
  });

  it('empties the temporary and its journal for a writer that starts over; discard removes both', () => {
    const out = path.join(dir, 'again.sqlite');
    const o = beginOutput(out);
    fs.writeFileSync(o.temp, 'half a merge');
    fs.writeFileSync(`${o.temp}-journal`, 'its journal');
    o.empty();
    expect(fs.statSync(o.temp).size).toBe(0);
    expect(fs.existsSync(`${o.temp}-journal`)).toBe(false);
    fs.writeFileSync(`${o.temp}-journal`, 'its journal');
    o.discard();
    o.discard();
    expect(fs.readdirSync(dir).filter((f) => f.includes('again'))).toEqual([]);
  });

  it('a missing folder: said of the output, in words', () => {
    const out = path.join(dir, 'no-such-folder', 'x.json');
    expect(() => beginOutput(out)).toThrow(`${out}: cannot create: no such directory ${path.dirname(out)}`);
  });
});
