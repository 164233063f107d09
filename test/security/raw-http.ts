// Raw HTTP over a socket, for requests no HTTP client will send: HTTP/1.0 without Host,
// duplicated Host headers, bodies cut off half-way.
import net from 'node:net';

export interface RawResponse {
  status: number;
  head: string;
  body: string;
}

/** Writes `request` as-is and reads until the server closes (or `timeoutMs`). */
export function rawExchange(port: number, request: string | Buffer, timeoutMs = 5000): Promise<RawResponse> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, '127.0.0.1');
    const chunks: Buffer[] = [];
    const timer = setTimeout(() => socket.destroy(), timeoutMs);
    socket.on('connect', () => socket.write(request));
    socket.on('data', (chunk) => chunks.push(chunk));
    socket.on('error', reject);
    socket.on('close', () => {
      clearTimeout(timer);
      const text = Buffer.concat(chunks).toString('utf8');
      const split = text.indexOf('\r\n\r\n');
      const head = split === -1 ? text : text.slice(0, split);
      const status = Number(/^HTTP\/1\.[01] (\d{3})/.exec(head)?.[1] ?? 0);
      resolve({ status, head, body: split === -1 ? '' : text.slice(split + 4) });
    });
  });
}

/** A GET with exactly these header lines, HTTP/1.0 so the server closes after answering. */
export function rawGet(port: number, path: string, headerLines: string[], version = '1.0'): Promise<RawResponse> {
  return rawExchange(port, `GET ${path} HTTP/${version}\r\n${headerLines.map((line) => `${line}\r\n`).join('')}Connection: close\r\n\r\n`);
}
