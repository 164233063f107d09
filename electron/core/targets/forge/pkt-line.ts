/**
 * Git's pkt-line framing (gitprotocol-common: "pkt-line Format"): four hex digits giving the
 * length of the line including themselves, then the data; "0000" is a flush-pkt. Every
 * smart-HTTP exchange Ferry has with a git host is framed this way.
 */
export const FLUSH = Buffer.from('0000');

export function pktLine(text: string | Buffer): Buffer {
  const data = typeof text === 'string' ? Buffer.from(text, 'utf8') : text;
  // 65520 is the protocol's largest pkt-line (65516 bytes of data)
  if (data.length > 65516) throw new Error('pkt-line too long');
  return Buffer.concat([Buffer.from((data.length + 4).toString(16).padStart(4, '0')), data]);
}

/** The lines of a whole pkt-line body; `null` stands for a flush-pkt. Stops at a truncated line. */
export function parsePktLines(body: Buffer): (Buffer | null)[] {
  const lines: (Buffer | null)[] = [];
  let at = 0;
  while (at + 4 <= body.length) {
    const length = Number.parseInt(body.subarray(at, at + 4).toString('ascii'), 16);
    if (!Number.isFinite(length)) break;
    if (length === 0) {
      lines.push(null);
      at += 4;
      continue;
    }
    if (length < 4 || at + length > body.length) break;
    lines.push(body.subarray(at + 4, at + length));
    at += length;
  }
  return lines;
}
