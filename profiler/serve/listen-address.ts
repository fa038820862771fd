// Where browser mode listens, and which names a request may reach it by.
//
// DNS rebinding: a page on evil.example can have evil.example resolve to
// 127.0.0.1 a moment after it loaded, and then talk to a server on this
// machine as its own origin (same scheme, host and port: the browser sees
// no cross-origin request). The token header already keeps the API shut
// (the page does not have the token), but nothing else should answer such a
// request either: every request's Host header must name this server, as the
// browser reached it — a loopback name, the address it listens on, this
// machine's name, or a name the user allowed (`serve --allow-host`). A name
// the attacker controls is none of these. An IP literal cannot be rebound
// (the page's origin would be that address itself).
//
// The port is not checked: an SSH tunnel (`ssh -L 8080:localhost:PORT`) or a
// proxy reaches the server with its own port in the Host header, and the
// port is no part of what rebinding changes.
import net from 'node:net';
import os from 'node:os';

export function isLoopback(host: string): boolean {
  return host === 'localhost' || host === '::1' || host === '[::1]' || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(host);
}

/** Every interface of the machine: 0.0.0.0, ::. */
export function isWildcard(host: string): boolean {
  return host === '0.0.0.0' || host === '::' || host === '[::]';
}

/** A host as the URL parser writes it: lower case, IPv4 in dotted decimal, IPv6 without brackets, no trailing dot. */
function canonicalHost(host: string): string | null {
  // Only a host and an optional port: no user info, path, query, spaces.
  if (host.length === 0 || host.length > 255 || /[\s/\\@?#]/.test(host)) return null;
  try {
    const name = new URL(`http://${host}`).hostname;
    return name.replace(/^\[(.*)\]$/, '$1').replace(/\.$/, '');
  } catch {
    return null;
  }
}

/** The host name of a Host header (`localhost:8080` → `localhost`, `[::1]:80` → `::1`), or null when it is not one. */
export function hostNameOf(header: string | undefined): string | null {
  return header === undefined ? null : canonicalHost(header);
}

/**
 * Whether a request whose Host header is `header` may be answered by a
 * server listening on `listenHost`: a loopback name or address always (a
 * local tunnel; not a name anyone else can point elsewhere); the address
 * listened on; on a wildcard address (0.0.0.0, ::) any IP literal; beyond
 * loopback also this machine's name (`os.hostname()`) and the names in
 * `allowed`. Nothing else: not a missing header, not another name.
 */
export function hostAllowed(header: string | undefined, listenHost: string, allowed: readonly string[] = []): boolean {
  const name = hostNameOf(header);
  if (name === null) return false;
  if (isLoopback(name)) return true;
  const listen = canonicalHost(listenHost);
  if (net.isIP(name)) return isWildcard(listenHost) || name === listen;
  if (isLoopback(listenHost)) return false;
  return name === canonicalHost(os.hostname()) || allowed.some((a) => canonicalHost(a) === name);
}

/**
 * What serving on a non-loopback `host` exposes (`serve --host`), said
 * before the URL is printed; null on loopback. `tokenFile`: the token is the
 * user's own, from that file, and not printed.
 */
export function exposureWarning(host: string, port: number, tokenFile: string | null): string | null {
  if (isLoopback(host)) return null;
  const where = isWildcard(host) ? `every network interface of this machine (${host}), port ${port}` : `${host}, port ${port}`;
  const lines = [
    `warning: serving on ${where}: any machine that can reach this address can connect, not only this one.`,
    '  The connection is plain HTTP: the access token and the recordings (kernel names, command lines, host names) cross the network unencrypted.',
  ];
  if (tokenFile === null) {
    lines.push(
      '  The token is in the URL printed below: anyone who sees it (this terminal, its logs, the network) can read every recording served here.',
      '  --token-file FILE uses a token of your own instead and prints none; on an untrusted network, keep the default 127.0.0.1 and reach it through `ssh -L`.',
    );
  } else {
    lines.push(`  Anyone with the token in ${tokenFile} can read every recording served here; on an untrusted network, keep 127.0.0.1 and use \`ssh -L\`.`);
  }
  return lines.join('\n');
}
