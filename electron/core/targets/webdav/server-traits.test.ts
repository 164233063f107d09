import { execFileSync } from 'node:child_process';
import { readdir, readFile, rm, writeFile } from 'node:fs/promises';
import net from 'node:net';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RealWebdav } from '../../../../test/webdav/process.js';
import { REAL_WEBDAV_SERVERS } from '../../../../test/webdav/servers.js';
import { createClient, type FileStat, type ResponseDataDetailed } from 'webdav';
import { MOD_DAV_FS_NAMESPACE, modDavFsTraits, ServerRecognition, servedByModDavFs } from './server-traits.js';

const PROPSET = '<http://apache.org/dav/propset/fs/1>';

describe('what Ferry knows a WebDAV server by (no server)', () => {
  it('takes Apache httpd 2.4 or later with mod_dav_fs loaded as a candidate for atomic PUTs, by its property set and its Server header', () => {
    expect(modDavFsTraits({ server: 'Apache/2.4.71 (Debian)', dav: `1,2, ${PROPSET}` })).toEqual({ atomicPuts: true, refusesLastModified: true });
    expect(modDavFsTraits({ server: 'Apache/2.4.62', dav: `1,2,${PROPSET}` })?.atomicPuts).toBe(true);
    expect(modDavFsTraits({ server: 'Apache/3.0.0 (Unix)', dav: `1, 2, ${PROPSET}` })?.atomicPuts).toBe(true);
  });

  it('knows that mod_dav_fs of any version refuses to set getlastmodified, but wrote PUTs in place before 2.4 (or may have: a hidden version)', () => {
    expect(modDavFsTraits({ server: 'Apache/2.2.34 (Unix)', dav: `1,2, ${PROPSET}` })).toEqual({ atomicPuts: false, refusesLastModified: true });
    // ServerTokens Prod: the version is not told, so 2.2 cannot be ruled out
    expect(modDavFsTraits({ server: 'Apache', dav: `1,2, ${PROPSET}` })).toEqual({ atomicPuts: false, refusesLastModified: true });
  });

  it('takes nothing else as a candidate: no property set (a proxied backend, mod_php), another server, a look-alike name or set', () => {
    expect(modDavFsTraits({ server: 'Apache/2.4.62 (Debian)', dav: '1, 2' })).toBeNull();
    expect(modDavFsTraits({ server: 'Apache/2.4.62 (Debian)', dav: null })).toBeNull();
    expect(modDavFsTraits({ server: 'nginx/1.22.1', dav: `1,2, ${PROPSET}` })).toBeNull();
    expect(modDavFsTraits({ server: null, dav: `1,2, ${PROPSET}` })).toBeNull();
    expect(modDavFsTraits({ server: null, dav: '1, 2, 3, access-control, calendar-access' })).toBeNull();
    expect(modDavFsTraits({ server: 'Apache-Coyote/1.1', dav: `1,2, ${PROPSET}` })).toBeNull();
    expect(modDavFsTraits({ server: 'Apache/2.4.62', dav: `1,2, ${PROPSET}x` })).toBeNull();
  });

  it("sees mod_dav_fs's own live property on a file it stores, and nothing in an empty or missing one", () => {
    expect(servedByModDavFs({ getcontentlength: 1, executable: 'F' })).toBe(true);
    expect(servedByModDavFs({ executable: 'T' })).toBe(true);
    // a server that does not know the property reports it empty in its 404 propstat
    expect(servedByModDavFs({ executable: '' })).toBe(false);
    expect(servedByModDavFs({ getcontentlength: 1 })).toBe(false);
    expect(servedByModDavFs(undefined)).toBe(false);
  });
});

describe("one write's recognition of its server", () => {
  const apache = modDavFsTraits({ server: 'Apache/2.4.71 (Debian)', dav: `1,2, ${PROPSET}` });
  const file = { type: 'file', props: { executable: 'F' } };

  it('takes the traits once both steps hold, in either order', () => {
    const first = new ServerRecognition();
    first.sawFiles([file]);
    expect(first.traits.atomicPuts).toBe(false);
    first.candidateIs(apache);
    expect(first.traits.atomicPuts).toBe(true);
    expect(first.recognised).toBe(true);
    const second = new ServerRecognition();
    second.candidateIs(apache);
    expect(second.open).toBe(true);
    second.sawFiles([{ type: 'directory', props: {} }, { type: 'file', props: { executable: '' } }]);
    expect(second.open).toBe(true);
    expect(second.traits.atomicPuts).toBe(false);
    second.sawFiles([file]);
    expect(second.traits).toEqual({ atomicPuts: true, refusesLastModified: true });
  });

  it('recognises nothing without a candidate, however many files carry the property', () => {
    const recognition = new ServerRecognition();
    recognition.candidateIs(null);
    recognition.sawFiles([file, file]);
    recognition.servedHere();
    expect(recognition.open).toBe(false);
    expect(recognition.recognised).toBe(false);
    expect(recognition.traits).toEqual({ atomicPuts: false, refusesLastModified: false });
  });
});

/** A PUT of `declared` bytes of which only `sent` go out before the connection is dropped. */
async function cutPut(server: RealWebdav, remotePath: string, declared: number, sent: number): Promise<void> {
  const url = new URL(remotePath, server.url);
  const auth = Buffer.from(`${server.username}:${server.password}`).toString('base64');
  await new Promise<void>((resolve, reject) => {
    const socket = net.connect(Number(url.port), url.hostname, () => {
      socket.write(`PUT ${url.pathname} HTTP/1.1\r\nHost: ${url.host}\r\nAuthorization: Basic ${auth}\r\nContent-Length: ${declared}\r\n\r\n`);
      socket.write(Buffer.alloc(sent, 0x61), () => setTimeout(() => (socket.destroy(), resolve()), 200));
    });
    socket.on('error', reject);
  });
  // the server notices the dropped connection and rolls back (or not) in its own time
  await new Promise((resolve) => setTimeout(resolve, 300));
}

for (const kind of REAL_WEBDAV_SERVERS) {
  describe.skipIf(kind.unavailable !== null)(`${kind.name}: the traits Ferry knows it by, on the real server`, () => {
    let server: RealWebdav;
    beforeAll(async () => {
      server = await kind.start();
    });
    afterAll(async () => {
      await server?.stop();
    });

    it(`is ${kind.putsAtomically ? '' : 'not '}recognised as mod_dav_fs with atomic PUTs, from its OPTIONS answer and a file's properties`, async () => {
      const authorization = `Basic ${Buffer.from(`${server.username}:${server.password}`).toString('base64')}`;
      const response = await fetch(server.url, { method: 'OPTIONS', headers: { authorization } });
      await response.arrayBuffer();
      expect(response.ok).toBe(true);
      const candidate = modDavFsTraits({ server: response.headers.get('server'), dav: response.headers.get('dav') });
      expect(candidate?.atomicPuts ?? false).toBe(kind.putsAtomically);
      const file = path.join(server.dataDir, 'listed.txt');
      await writeFile(file, 'x');
      const listing = await createClient(server.url, { username: server.username, password: server.password }).stat('/listed.txt', {
        details: true,
        data: `<?xml version="1.0"?><d:propfind xmlns:d="DAV:" xmlns:a="${MOD_DAV_FS_NAMESPACE}"><d:prop><d:getcontentlength/><a:executable/></d:prop></d:propfind>`,
      });
      expect(servedByModDavFs((listing as ResponseDataDetailed<FileStat>).data.props as Record<string, unknown>)).toBe(kind.putsAtomically);
      await rm(file);
    });

    it.skipIf(!kind.putsAtomically)('refuses a PROPPATCH of getlastmodified, as mod_dav_fs is known to', async () => {
      const body = `<?xml version="1.0" encoding="utf-8"?><d:propertyupdate xmlns:d="DAV:"><d:set><d:prop><d:getlastmodified>${new Date(0).toUTCString()}</d:getlastmodified></d:prop></d:set></d:propertyupdate>`;
      const file = path.join(server.dataDir, 'dated.txt');
      await writeFile(file, 'x');
      if (kind.ownerOfFiles) execFileSync('chown', [kind.ownerOfFiles, file]);
      const response = await fetch(new URL('dated.txt', server.url), { method: 'PROPPATCH', body, headers: { 'content-type': 'application/xml', authorization: `Basic ${Buffer.from(`${server.username}:${server.password}`).toString('base64')}` } });
      const text = await response.text();
      expect(response.status).toBe(207);
      expect(text).toMatch(/HTTP\/1\.1 409/);
      expect(text).not.toMatch(/HTTP\/1\.1 200/);
      await rm(file);
    });

    // What the recognition promises, on the real server: a PUT cut off mid-body leaves a new
    // name empty and an existing file as it was (nothing of the cut PUT anywhere to be seen).
    it.skipIf(!kind.putsAtomically)('leaves nothing at a new name, and an existing file unchanged, when a PUT is cut off mid-body', async () => {
      const existing = path.join(server.dataDir, 'kept.txt');
      await writeFile(existing, 'the old bytes');
      if (kind.ownerOfFiles) execFileSync('chown', [kind.ownerOfFiles, existing]);
      await cutPut(server, 'new.bin', 1_000_000, 200_000);
      await cutPut(server, 'kept.txt', 1_000_000, 200_000);
      expect(await readFile(existing, 'utf8')).toBe('the old bytes');
      expect((await readdir(server.dataDir)).sort()).toEqual(['kept.txt']);
    });

    // Why the others keep the temporary name and MOVE: the same cut leaves part of the file
    // under the name the PUT was for (docs/targets/webdav.md, Findings 3). Not seen through
    // `php -S`, which reads a request's whole body before it runs the script, so a cut PUT never
    // reaches SabreDAV here (its FS tree's `put` is a file_put_contents onto the name).
    const frontReadsWholeBody = kind.name.startsWith('SabreDAV');
    if (!kind.putsAtomically && frontReadsWholeBody) console.warn(`[webdav tests] ${kind.name}: the cut-PUT probe is not run: php -S reads the whole body before SabreDAV runs`);
    it.skipIf(kind.putsAtomically || frontReadsWholeBody)('leaves part of the file at the name when a PUT is cut off mid-body', async () => {
      await cutPut(server, 'part.bin', 1_000_000, 200_000);
      const left = (await readdir(server.dataDir)).filter((name) => name === 'part.bin');
      expect(left).toEqual(['part.bin']);
      const size = (await readFile(path.join(server.dataDir, 'part.bin'))).length;
      expect(size).toBeGreaterThan(0);
      expect(size).toBeLessThan(1_000_000);
    });
  });
}
