// `streamscope serve --token-file F` (profiler/serve/token-file.ts): the
// token is read from a file only its owner can read, checked as ssh checks
// a key, and every refusal names the file and what to do; the server then
// takes that token and no other.
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServer } from '../../profiler/serve/server.ts';
import { readTokenFile } from '../../profiler/serve/token-file.ts';
import { tempDir } from '../helpers/native.ts';

const recording = path.resolve(import.meta.dirname, '../fixtures/recordings/normalise-concurrent.sqlite');
const TOKEN = 'b0c1d2e3f405162738495a6b7c8d9eaf0123456789abcdef0123456789abcdef';

let dir: string;
beforeAll(() => {
  dir = tempDir('token-file');
});
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

/** A file holding `text`, with `mode`. */
function file(name: string, text: string, mode = 0o600): string {
  const f = path.join(dir, name);
  fs.writeFileSync(f, text);
  fs.chmodSync(f, mode);
  return f;
}

describe('readTokenFile', () => {
  it('reads the token, without its end of line', () => {
    expect(readTokenFile(file('good', `${TOKEN}\n`))).toBe(TOKEN);
    expect(readTokenFile(file('crlf', `  ${TOKEN}\r\n`, 0o400))).toBe(TOKEN);
  });

  it.each([
    ['missing', () => path.join(dir, 'nope'), /--token-file .*nope: no such file \(make one: `\(umask 077; openssl rand -hex 32 > /],
    ['empty', () => file('empty', ''), /: empty \(make one/],
    ['only an end of line', () => file('blank', '\n\n'), /: empty/],
    ['readable by the group', () => file('group', TOKEN, 0o640), /other users can access it \(mode 0640\).*chmod 600 /],
    ['readable by everyone', () => file('world', TOKEN, 0o644), /other users can access it \(mode 0644\)/],
    ['writable by the group', () => file('gw', TOKEN, 0o620), /mode 0620/],
    ['a directory', () => fs.mkdirSync(path.join(dir, 'adir'), { mode: 0o700 }) ?? path.join(dir, 'adir'), /not a regular file/],
    ['too short', () => file('short', 'abc123'), /the token has 6 characters, fewer than 32: too easy to guess/],
    ['two words', () => file('words', `${TOKEN} ${TOKEN}`), /one line of visible ASCII/],
    ['two lines', () => file('lines', `${TOKEN}\n${TOKEN}\n`), /one line of visible ASCII/],
    ['not ASCII', () => file('utf8', `${TOKEN}é`), /visible ASCII/],
    ['huge', () => file('huge', 'a'.repeat(5000)), /a token is one line of at most 1024 characters/],
  ])('refuses a file that is %s, saying what to do', (_name, make, message) => {
    const f = make();
    expect(() => readTokenFile(f)).toThrow(message);
    expect(() => readTokenFile(f)).toThrow(f);
  });
});

describe('a server with the token of the file', () => {
  it('answers that token, refuses any other (its own random one included)', async () => {
    const server = await startServer({ files: [recording], port: 0, staticDir: dir, token: readTokenFile(file('served', `${TOKEN}\n`)) });
    try {
      expect(server.token).toBe(TOKEN);
      const call = (token: string) =>
        fetch(`http://127.0.0.1:${server.port}/api/listRecordings`, { method: 'POST', headers: { 'x-streamscope-token': token }, body: '{"args":[]}' });
      expect((await call(TOKEN)).status).toBe(200);
      expect((await call(TOKEN.slice(0, -1) + '0')).status).toBe(403);
      expect((await call('')).status).toBe(403);
    } finally {
      await server.close();
    }
  });
});
