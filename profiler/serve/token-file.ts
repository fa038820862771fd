// `streamscope serve --token-file FILE`: the access token is the user's own,
// read from a file only they can read, instead of a fresh random one printed
// in the URL. For serving beyond loopback: the token then never appears in a
// terminal or a log, and stays the same across restarts (bookmarks work).
//
// Checked as ssh checks a private key: a regular file, readable by its owner
// alone (no group or other permission bits), holding one token of visible
// ASCII (it travels in an HTTP header and a URL), long enough not to be
// guessed. Every refusal says what to do.
import fs from 'node:fs';

/** Shortest token accepted: 32 characters (`openssl rand -hex 16` gives 32; the default token is 64). */
export const MIN_TOKEN_LENGTH = 32;
const MAX_TOKEN_LENGTH = 1024;

export class TokenFileError extends Error {
  override name = 'TokenFileError';
}

const MAKE_ONE = (file: string) => `(make one: \`(umask 077; openssl rand -hex 32 > ${file})\`)`;

/** The token in `file`; throws TokenFileError naming the file and the problem. */
export function readTokenFile(file: string): string {
  let st: fs.Stats;
  try {
    st = fs.statSync(file);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    throw new TokenFileError(code === 'ENOENT' ? `--token-file ${file}: no such file ${MAKE_ONE(file)}` : `--token-file ${file}: ${(err as Error).message}`);
  }
  if (!st.isFile()) throw new TokenFileError(`--token-file ${file}: not a regular file`);
  if (process.platform !== 'win32' && (st.mode & 0o077) !== 0) {
    const mode = (st.mode & 0o777).toString(8).padStart(4, '0');
    throw new TokenFileError(`--token-file ${file}: other users can access it (mode ${mode}); make it its owner's alone: chmod 600 ${file}`);
  }
  if (st.size > MAX_TOKEN_LENGTH + 2)
    throw new TokenFileError(`--token-file ${file}: ${st.size} bytes; a token is one line of at most ${MAX_TOKEN_LENGTH} characters`);
  let text: string;
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch (err) {
    throw new TokenFileError(`--token-file ${file}: ${(err as Error).message}`);
  }
  // One line; its end of line (and surrounding blanks) is no part of the token.
  const token = text.trim();
  if (token.length === 0) throw new TokenFileError(`--token-file ${file}: empty ${MAKE_ONE(file)}`);
  if (!/^[\x21-\x7e]+$/.test(token)) {
    throw new TokenFileError(`--token-file ${file}: the token must be one line of visible ASCII characters (no spaces, no other characters)`);
  }
  if (token.length < MIN_TOKEN_LENGTH) {
    throw new TokenFileError(
      `--token-file ${file}: the token has ${token.length} characters, fewer than ${MIN_TOKEN_LENGTH}: too easy to guess ${MAKE_ONE(file)}`,
    );
  }
  if (token.length > MAX_TOKEN_LENGTH) throw new TokenFileError(`--token-file ${file}: the token is longer than ${MAX_TOKEN_LENGTH} characters`);
  return token;
}
