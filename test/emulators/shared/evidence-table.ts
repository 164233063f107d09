import { readFileSync } from 'node:fs';

/**
 * The "Requests" table of a docs/targets/<target>.md page, read as the list of requests a
 * target may send: the "what Ferry sends" contract tests check every request they record
 * against it, so a request without a row (without evidence) fails a test, and the page stays
 * the one place the list lives.
 *
 * A row's first cell starts with `` `METHOD host/path` ``: `host` is the real host (with
 * placeholders such as `files.<region>.osf.io` or `<s3>`), `<path>` in the path stands for any
 * rest of a path, any other `<name>` for one segment. The query is not part of the match.
 */
export interface EvidenceRow {
  method: string;
  host: string;
  path: RegExp;
  /** the row's first cell, for messages */
  request: string;
}

export interface SentRequest {
  method: string;
  /** the real host the emulator server stands for (as written in the table) */
  host: string;
  /** path without query */
  path: string;
}

export function evidenceRows(target: 'osf' | 'zenodo' | 'figshare'): EvidenceRow[] {
  const page = readFileSync(new URL(`../../../docs/targets/${target}.md`, import.meta.url), 'utf8');
  const section = page.split(/^## /m).find((part) => part.startsWith('Requests')) ?? '';
  const rows: EvidenceRow[] = [];
  for (const line of section.split('\n')) {
    const match = /^\| `(GET|HEAD|PUT|POST|PATCH|DELETE) ([^/`\s]+)(\/[^`\s]*)`/.exec(line);
    if (!match) continue;
    const [, method, host, path] = match as unknown as [string, string, string, string];
    const pattern = path
      .split(/(<[^>]+>)/)
      .map((part) => (part === '<path>' ? '.*' : /^<[^>]+>$/.test(part) ? '[^/]+' : part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')))
      .join('');
    rows.push({ method, host, path: new RegExp(`^${pattern}$`), request: line.split('|')[1]!.trim() });
  }
  if (rows.length === 0) throw new Error(`docs/targets/${target}.md has no Requests rows`);
  return rows;
}

/** The rows a request matches (none: a request the page has no evidence for). */
export function rowsFor(rows: EvidenceRow[], sent: SentRequest): EvidenceRow[] {
  return rows.filter((row) => row.method === sent.method && row.host === sent.host && row.path.test(sent.path));
}

/** The requests with no row on the page, as "METHOD host/path" lines. */
export function withoutEvidence(rows: EvidenceRow[], sent: SentRequest[]): string[] {
  return sent.filter((request) => rowsFor(rows, request).length === 0).map((request) => `${request.method} ${request.host}${request.path}`);
}

/**
 * The most requests `at` (ms, sorted or not) puts in any window of `windowMs`: the rate a
 * service saw. `slackMs` forgives the jitter between a client's send and a server's receipt
 * (client and emulator share one event loop, which a loaded test machine delays unevenly);
 * a client that ignores its rate still shows at once.
 */
export function busiestWindow(at: number[], windowMs = 1000, slackMs = 150): number {
  const times = [...at].sort((a, b) => a - b);
  let most = 0;
  for (let i = 0, j = 0; i < times.length; i++) {
    while (times[i]! - times[j]! >= windowMs - slackMs) j++;
    most = Math.max(most, i - j + 1);
  }
  return most;
}
