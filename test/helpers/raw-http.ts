// One HTTP request written byte for byte to a server on loopback: headers
// fetch() would set or refuse (Host, none at all, malformed lines), and the
// answer as it came (status, headers by lower-case name, body).
import net from 'node:net';

/** One HTTP request written byte for byte (fetch would set Host itself); the status, headers and body of its answer. */
export function rawRequest(port: number, head: string, body = ''): Promise<{ status: number; headers: Record<string, string>; body: string }> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, '127.0.0.1');
    let data = '';
    socket.setEncoding('latin1');
    socket.on('data', (c: string) => (data += c));
    socket.on('error', reject);
    socket.on('end', () => {
      const [top, ...rest] = data.split('\r\n\r\n');
      const [statusLine, ...headerLines] = top!.split('\r\n');
      const headers = Object.fromEntries(headerLines.map((l) => [l.slice(0, l.indexOf(':')).toLowerCase(), l.slice(l.indexOf(':') + 1).trim()]));
      let body = rest.join('\r\n\r\n');
      if (headers['transfer-encoding'] === 'chunked') body = unchunk(body);
      resolve({ status: Number(statusLine!.split(' ')[1]), headers, body });
    });
    socket.write(`${head}\r\nconnection: close\r\n\r\n${body}`);
  });
}

/** A chunked body's content. */
function unchunk(raw: string): string {
  let out = '';
  for (let at = 0; ;) {
    const eol = raw.indexOf('\r\n', at);
    if (eol < 0) return out;
    const size = parseInt(raw.slice(at, eol), 16);
    if (!size) return out;
    out += raw.slice(eol + 2, eol + 2 + size);
    at = eol + 2 + size + 2;
  }
}
