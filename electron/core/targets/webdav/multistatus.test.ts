import { describe, expect, it } from 'vitest';
import { FerryError } from '../../errors.js';
import { basePathOf, listingOf, statOf, statusesOf } from './multistatus.js';
import { toFerryError } from './dav-errors.js';

// Apache httpd 2.4 mod_dav_fs, as it answers PROPFIND_BODY (prefixes per response, the
// properties it lacks in a 404 propstat after the 200 one); captured from the test server
const APACHE = `<?xml version="1.0" encoding="utf-8"?>
<D:multistatus xmlns:D="DAV:" xmlns:ns3="http://owncloud.org/ns" xmlns:ns2="http://nextcloud.org/ns" xmlns:ns1="http://apache.org/dav/props/" xmlns:ns0="DAV:">
<D:response xmlns:lp1="DAV:" xmlns:lp2="http://apache.org/dav/props/" xmlns:g0="DAV:" xmlns:g1="http://owncloud.org/ns" xmlns:g2="http://nextcloud.org/ns" xmlns:g3="http://apache.org/dav/props/">
<D:href>/dav/f/</D:href>
<D:propstat>
<D:prop>
<lp1:getlastmodified>Wed, 02 Dec 2026 00:29:24 GMT</lp1:getlastmodified>
<lp1:getetag>W/"1000-6619bbc2a1b70"</lp1:getetag>
<lp1:resourcetype><D:collection/></lp1:resourcetype>
</D:prop>
<D:status>HTTP/1.1 200 OK</D:status>
</D:propstat>
<D:propstat>
<D:prop>
<g0:getcontentlength/>
<g0:getcontenttype/>
<g1:fileid/>
<g1:checksums/>
<g2:creation_time/>
<g3:executable/>
</D:prop>
<D:status>HTTP/1.1 404 Not Found</D:status>
</D:propstat>
</D:response>
<D:response xmlns:lp1="DAV:" xmlns:lp2="http://apache.org/dav/props/" xmlns:g0="DAV:" xmlns:g1="http://owncloud.org/ns" xmlns:g2="http://nextcloud.org/ns">
<D:href>/dav/f/file%20one.txt</D:href>
<D:propstat>
<D:prop>
<lp1:getlastmodified>Wed, 02 Dec 2026 00:29:24 GMT</lp1:getlastmodified>
<lp1:getcontentlength>1041</lp1:getcontentlength>
<lp1:getetag>"411-6619bbc29d313"</lp1:getetag>
<lp1:resourcetype/>
<lp2:executable>F</lp2:executable>
</D:prop>
<D:status>HTTP/1.1 200 OK</D:status>
</D:propstat>
<D:propstat>
<D:prop>
<g0:getcontenttype/>
<g1:fileid/>
<g1:checksums/>
<g2:creation_time/>
</D:prop>
<D:status>HTTP/1.1 404 Not Found</D:status>
</D:propstat>
</D:response>
</D:multistatus>`;

describe('a PROPFIND Multi-Status read as FileStat rows', () => {
  it("reads Apache's answer: the folder itself and a file, only the 200 propstat's properties, names decoded below the server's path", () => {
    const [folder, file] = listingOf(APACHE, '/dav', "'/f'");
    expect(folder).toMatchObject({ filename: '/f', basename: 'f', type: 'directory', lastmod: 'Wed, 02 Dec 2026 00:29:24 GMT', etag: 'W/1000-6619bbc2a1b70' });
    expect(folder!.props).not.toHaveProperty('executable');
    expect(file).toMatchObject({ filename: '/f/file one.txt', basename: 'file one.txt', type: 'file', size: 1041, etag: '411-6619bbc29d313', mime: '' });
    expect(file!.props).toEqual({ getlastmodified: 'Wed, 02 Dec 2026 00:29:24 GMT', getcontentlength: '1041', getetag: '"411-6619bbc29d313"', executable: 'F' });
  });

  it("reads Nextcloud's: an absolute href, a default namespace, nested checksums, ids as text, and a 404 propstat before the 200 one", () => {
    const xml = `<?xml version="1.0"?>
<multistatus xmlns="DAV:" xmlns:oc="http://owncloud.org/ns" xmlns:nc="http://nextcloud.org/ns">
 <response><href>https://cloud.example.org/remote.php/dav/files/ana/Data%20%26%20more/a%C3%A9.csv</href>
  <propstat><prop><oc:checksums/></prop><status>HTTP/1.1 404 Not Found</status></propstat>
  <propstat><prop>
   <getcontentlength>12</getcontentlength><getcontenttype>text/csv; charset=utf-8</getcontenttype><resourcetype/>
   <oc:fileid>00000123</oc:fileid><oc:checksums><oc:checksum>SHA1:aa MD5:bb</oc:checksum><oc:checksum>ADLER32:cc</oc:checksum></oc:checksums>
   <nc:creation_time>1700000000</nc:creation_time>
  </prop><status>HTTP/1.1 200 OK</status></propstat>
 </response>
</multistatus>`;
    const [file] = listingOf(xml, '/remote.php/dav/files/ana', "'/Data & more'");
    expect(file).toMatchObject({ filename: '/Data & more/aé.csv', basename: 'aé.csv', type: 'file', size: 12, mime: 'text/csv' });
    expect(file!.props).toMatchObject({ fileid: '00000123', checksums: 'SHA1:aa MD5:bb ADLER32:cc', creation_time: '1700000000' });
  });

  it("takes `executable` only from mod_dav_fs's namespace, and a collection only from DAV:resourcetype", () => {
    const xml = `<d:multistatus xmlns:d="DAV:" xmlns:x="urn:other">
<d:response><d:href>/s/</d:href><d:propstat><d:prop><d:resourcetype><x:collection/></d:resourcetype><x:executable>T</x:executable></d:prop><d:status>HTTP/1.1 200 OK</d:status></d:propstat></d:response>
</d:multistatus>`;
    const [row] = listingOf(xml, '/', 'the top folder');
    expect(row).toMatchObject({ filename: '/s', type: 'file' });
    expect(row!.props).toEqual({});
  });

  it('a response the server could not describe (a status, no propstat) is no row', () => {
    const xml = APACHE.replace('</D:multistatus>', '<D:response><D:href>/dav/f/broken-link</D:href><D:status>HTTP/1.1 500 Internal Server Error</D:status></D:response></D:multistatus>');
    expect(listingOf(xml, '/dav', "'/f'").map((row) => row.basename)).toEqual(['f', 'file one.txt']);
  });

  it('the server URL itself reads as /', () => {
    const xml = '<d:multistatus xmlns:d="DAV:"><d:response><d:href>/dav/</d:href><d:propstat><d:prop><d:resourcetype><d:collection/></d:resourcetype></d:prop><d:status>HTTP/1.1 200 OK</d:status></d:propstat></d:response></d:multistatus>';
    expect(listingOf(xml, '/dav', 'the top folder').map((row) => [row.filename, row.basename, row.type])).toEqual([['/', '', 'directory']]);
  });

  it('a Depth 0 answer: the one resource; a response with no 2xx propstat throws its status, as a 404', () => {
    expect(statOf(APACHE, '/dav', "'/f'")).toMatchObject({ filename: '/f', type: 'directory' });
    const missing = '<d:multistatus xmlns:d="DAV:"><d:response><d:href>/dav/gone</d:href><d:status>HTTP/1.1 404 Not Found</d:status></d:response></d:multistatus>';
    let thrown: unknown;
    try {
      statOf(missing, '/dav', "'/gone'");
    } catch (error) {
      thrown = error;
    }
    expect(toFerryError(thrown, '/gone').status).toBe(404);
  });

  it("a PROPPATCH's 207: each propstat's status, as Apache refuses getlastmodified and a server that sets it answers", () => {
    const refused = '<D:multistatus xmlns:D="DAV:"><D:response><D:href>/dav/a.txt</D:href><D:propstat><D:prop><D:getlastmodified/></D:prop><D:status>HTTP/1.1 409 Conflict</D:status></D:propstat></D:response></D:multistatus>';
    expect(statusesOf(refused, "'/a.txt'")).toEqual([409]);
    expect(statusesOf(refused.replace('409 Conflict', '200 OK'), "'/a.txt'")).toEqual([200]);
  });

  it("the server URL's path, decoded, without a trailing slash", () => {
    expect(basePathOf('https://cloud.example.org/remote.php/dav/files/ana%20b/')).toBe('/remote.php/dav/files/ana b');
    expect(basePathOf('http://127.0.0.1:8080')).toBe('/');
  });

  it('an answer that is no Multi-Status (a proxy error page, cut XML) is a sentence, not an empty listing', () => {
    for (const body of ['<html><body>Bad gateway</body></html>', `${APACHE.slice(0, 600)}`, '']) {
      let thrown: unknown;
      try {
        listingOf(body, '/dav', "'/f'");
      } catch (error) {
        thrown = error;
      }
      expect(thrown).toBeInstanceOf(FerryError);
      expect((thrown as FerryError).message).toMatch(/^The WebDAV server's answer for '\/f' is not a WebDAV listing Ferry can read \(.+\)\.$/);
    }
  });
});
