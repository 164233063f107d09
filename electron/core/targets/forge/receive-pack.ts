import { FerryError } from '../../errors.js';
import type { GitHttp } from './git-http.js';
import { ZERO_OID } from './git-objects.js';
import { packStream, type PackObject } from './pack-stream.js';
import { FLUSH, parsePktLines, pktLine } from './pkt-line.js';

/**
 * git push over smart HTTP (gitprotocol-http "Smart Service git-receive-pack",
 * gitprotocol-pack "Pushing Data To a Server"): one GET for the ref advertisement, then one
 * POST carrying the ref update and the whole packfile. The host applies the update only if the
 * ref still holds `oldOid` (receive-pack locks the ref and compares), and only after the whole
 * pack arrived and was checked: a push lands completely or not at all, and never over someone
 * else's newer commit.
 */
export interface Advertisement {
  /** full ref name → commit id */
  refs: Map<string, string>;
  capabilities: Set<string>;
}

export async function receivePackRefs(http: GitHttp): Promise<Advertisement> {
  const response = await http.request('info/refs?service=git-receive-pack', { headers: { accept: 'application/x-git-receive-pack-advertisement' } });
  const type = response.headers.get('content-type') ?? '';
  const body = Buffer.from(await response.arrayBuffer());
  if (!type.startsWith('application/x-git-receive-pack-advertisement')) {
    // a "dumb" HTTP server, or a login page: nothing a push can go through
    throw new FerryError(502, 'upstream_error', `${http.endpoint.service} at ${http.endpoint.url} does not speak git's smart HTTP protocol for pushing (it answered ${type || 'no content type'}); check the repository URL.`);
  }
  return parseAdvertisement(body);
}

/** The refs and capabilities of an advertisement ("# service=..." and its flush first). */
export function parseAdvertisement(body: Buffer): Advertisement {
  const lines = parsePktLines(body);
  const refs = new Map<string, string>();
  let capabilities = new Set<string>();
  let first = true;
  for (const line of lines) {
    if (line === null) continue;
    const text = line.toString('utf8').replace(/\n$/, '');
    if (text.startsWith('# service=')) continue;
    const [refPart, caps] = first ? text.split('\0') : [text, undefined];
    if (first && caps !== undefined) capabilities = new Set(caps.split(' ').filter(Boolean));
    first = false;
    const [oid, name] = refPart!.split(' ');
    // an empty repository advertises "0000…0000 capabilities^{}" only for the capabilities
    if (oid && name && oid !== ZERO_OID && !name.endsWith('^{}')) refs.set(name, oid);
  }
  return { refs, capabilities };
}

export type PushResult = { ok: true } | { ok: false; reason: string };

/**
 * Sends `objects` and moves `ref` from `oldOid` (ZERO_OID: create it) to `newOid`. A refusal of
 * the ref update (someone else pushed, a protected branch, a hook) comes back as
 * `{ok: false, reason}` in the host's words; a pack the host could not take fails as a FerryError.
 */
export async function pushPack(http: GitHttp, advertised: Advertisement, update: { ref: string; oldOid: string; newOid: string }, objects: PackObject[]): Promise<PushResult> {
  // report-status only: no side-band, so the answer is plain pkt-lines; no agent (some hosts refuse unknown capabilities)
  const wanted = ['report-status'].filter((c) => advertised.capabilities.has(c));
  async function* body(): AsyncGenerator<Buffer> {
    yield pktLine(`${update.oldOid} ${update.newOid} ${update.ref}\0${wanted.join(' ')}\n`);
    yield FLUSH;
    yield* packStream(objects);
  }
  const response = await http.request('git-receive-pack', {
    method: 'POST',
    headers: { 'content-type': 'application/x-git-receive-pack-request', accept: 'application/x-git-receive-pack-result' },
    body: body(),
  });
  const answer = Buffer.from(await response.arrayBuffer());
  if (!wanted.includes('report-status')) return { ok: true };
  const lines = parsePktLines(answer).filter((l): l is Buffer => l !== null).map((l) => l.toString('utf8').replace(/\n$/, ''));
  const unpack = lines.find((l) => l.startsWith('unpack '));
  if (unpack !== 'unpack ok') {
    throw new FerryError(502, 'upstream_error', `${http.endpoint.service} could not store the pushed data (it said: ${unpack?.slice(7) || 'no report'}); nothing was changed. Try again.`);
  }
  const status = lines.find((l) => l.startsWith(`ok ${update.ref}`) || l.startsWith(`ng ${update.ref}`));
  if (status?.startsWith('ok ')) return { ok: true };
  return { ok: false, reason: status?.slice(4 + update.ref.length) || 'no reason given' };
}
