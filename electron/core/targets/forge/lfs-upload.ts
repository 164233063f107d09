import { createHash } from 'node:crypto';
import { Readable } from 'node:stream';
import { FerryError } from '../../errors.js';
import type { Entry } from '../../target.js';
import type { GitHttp } from './git-http.js';

/**
 * Git LFS uploads through the batch API (git-lfs docs/api/batch.md, basic transfer
 * docs/api/basic-transfers.md): one `POST <repo>/info/lfs/objects/batch` names the objects;
 * the server answers, per object, an upload action (an href and the headers to send there,
 * often on another host such as a storage bucket) or none when it has the object already.
 * Ferry then PUTs the bytes, streamed, with exactly the action's headers — never the git
 * token, which stays on the repository's own origin — and calls the verify action if given.
 * The commit then carries a small pointer file instead of the bytes (git-lfs docs/spec.md).
 */
export interface LfsObject {
  /** sha256 of the content, lowercase hex */
  oid: string;
  size: number;
  entry: Entry;
}

const LFS_JSON = 'application/vnd.git-lfs+json';

/** The pointer file that stands in the tree for an LFS object (spec v1, keys sorted, "version" first). */
export function lfsPointer(oid: string, size: number): Buffer {
  return Buffer.from(`version https://git-lfs.github.com/spec/v1\noid sha256:${oid}\nsize ${size}\n`);
}

/** A .gitattributes line that marks exactly `path` as stored in LFS (spaces and glob characters escaped). */
export function lfsAttributeLine(path: string): string {
  const pattern = path.replace(/[\\*?[\]!#]/g, (c) => `\\${c}`).replace(/ /g, '[[:space:]]');
  return `/${pattern} filter=lfs diff=lfs merge=lfs -text`;
}

export async function sha256Of(entry: Entry): Promise<{ oid: string; size: number }> {
  const hash = createHash('sha256');
  let size = 0;
  for await (const chunk of await entry.open()) {
    hash.update(chunk as Buffer);
    size += (chunk as Buffer).length;
  }
  return { oid: hash.digest('hex'), size };
}

/**
 * Uploads `objects`; false when the repository has no LFS (the batch endpoint answers 404,
 * 405, 501 or refuses uploads), so the caller can refuse those files with a sentence.
 */
export async function lfsUpload(http: GitHttp, ref: string, objects: LfsObject[], signal: AbortSignal): Promise<boolean> {
  let response: Response;
  try {
    response = await http.request('info/lfs/objects/batch', {
      method: 'POST',
      headers: { accept: LFS_JSON, 'content-type': LFS_JSON },
      body: (async function* () {
        yield Buffer.from(JSON.stringify({ operation: 'upload', transfers: ['basic'], ref: { name: ref }, objects: objects.map(({ oid, size }) => ({ oid, size })), hash_algo: 'sha256' }));
      })(),
    });
  } catch (error) {
    if (error instanceof FerryError && (error.status === 404 || (error.status === 502 && /HTTP (405|501)/.test(error.message)))) return false;
    throw error;
  }
  const answer = (await response.json()) as { objects?: { oid: string; size: number; actions?: Record<string, { href: string; header?: Record<string, string> }>; error?: { code: number; message: string } }[] };
  for (const object of objects) {
    const said = answer.objects?.find((o) => o.oid === object.oid);
    if (!said) throw new FerryError(502, 'upstream_error', `${http.endpoint.service}'s Git LFS server did not answer for "${object.entry.path}"; nothing was pushed.`);
    if (said.error) throw new FerryError(502, 'upstream_error', `${http.endpoint.service}'s Git LFS server refused "${object.entry.path}" (${said.error.message}); nothing was pushed.`);
    const upload = said.actions?.upload;
    if (!upload) continue; // the server has it already
    await send(upload.href, 'PUT', { ...upload.header, 'content-type': 'application/octet-stream', 'content-length': String(object.size) }, Readable.toWeb(await object.entry.open()) as unknown as ReadableStream<Uint8Array>, signal, object.entry.path, http);
    const verify = said.actions?.verify;
    if (verify) await send(verify.href, 'POST', { ...verify.header, accept: LFS_JSON, 'content-type': LFS_JSON }, JSON.stringify({ oid: object.oid, size: object.size }), signal, object.entry.path, http);
  }
  return true;
}

/** A request to an LFS action's href with the action's own headers only: no git credentials. */
async function send(href: string, method: string, headers: Record<string, string>, body: RequestInit['body'], signal: AbortSignal, path: string, http: GitHttp): Promise<void> {
  const url = new URL(href);
  if (url.protocol !== 'https:' && url.origin !== http.origin) {
    throw new FerryError(502, 'upstream_error', `${http.endpoint.service}'s Git LFS server asked for "${path}" to be sent unencrypted to ${url.host}; nothing was sent or pushed.`);
  }
  const response = await fetch(url, { method, headers, body, signal, redirect: 'error', duplex: 'half' } as RequestInit).catch((error: unknown) => {
    throw new FerryError(502, 'upstream_unavailable', `Uploading "${path}" to Git LFS storage failed (${(error as Error).message}); nothing was pushed.`);
  });
  await response.body?.cancel();
  if (!response.ok) throw new FerryError(502, 'upstream_error', `Git LFS storage answered HTTP ${response.status} for "${path}"; nothing was pushed. Try again.`);
}
