import { readFileSync } from 'node:fs';
import path from 'node:path';

/**
 * The real recorded exchanges beside a checkout (`../shared/reference/recordings/` from the
 * repository root; read-only, never copied into the repository): a response body, and what
 * its folder's `.meta.json` says of it (request, status, headers), when it says anything.
 */
const ROOT = path.resolve(process.cwd(), '../shared/reference/recordings');

export interface Recording {
  body: string;
  meta: { request: string; status: number; headers: Record<string, string[]> } | null;
}

export function recording(service: string, file: string): Recording {
  const folder = path.join(ROOT, service);
  const listed = JSON.parse(readFileSync(path.join(folder, '.meta.json'), 'utf8')) as ({ file: string } & NonNullable<Recording['meta']>)[];
  return { body: readFileSync(path.join(folder, file), 'utf8'), meta: listed.find((entry) => entry.file === file) ?? null };
}
