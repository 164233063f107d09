import path from 'node:path';
import { SaxesParser } from 'saxes';
import type { FileStat } from 'webdav';
import { FerryError } from '../../errors.js';
import { MOD_DAV_FS_NAMESPACE } from './server-traits.js';

/**
 * The body of a PROPFIND's 207 Multi-Status (RFC 4918 §9.1, §14.16), read as the FileStat
 * rows the target works with, by a streaming XML parser (saxes) with namespaces resolved.
 *
 * Why not the webdav client's own reading: it builds a whole object tree with fast-xml-parser
 * and drops the namespaces (any server's `executable` would read as mod_dav_fs's), takes a
 * response's first propstat whatever its status, and costs 5 ms a 50-file listing warm and
 * 10–40 ms for each of a process's first ones, while a write's listings after its last file
 * wait for one another on the main thread (docs/performance.md, "PROPFIND answers read as they
 * are parsed"). Invariants:
 * - a property counts only from a propstat whose status is 2xx; a 404 propstat (a property
 *   the server does not have) leaves it absent, and a response with none is no row of a listing;
 * - a property is known by its namespace and name (PROPERTY_KEYS); values are the element's
 *   text, nested elements' text joined by spaces (Nextcloud's `oc:checksums`/`oc:checksum`);
 * - a row's `filename` is its href's path below the server URL's path, percent-decoded, with
 *   no trailing slash ('/' for the server URL itself), as the webdav client gave it.
 */

/** The properties PROPFIND_BODY asks for, by Clark name, under the keys FileStat.props has always used. */
const PROPERTY_KEYS: ReadonlyMap<string, string> = new Map([
  ['{DAV:}getlastmodified', 'getlastmodified'],
  ['{DAV:}getcontentlength', 'getcontentlength'],
  ['{DAV:}getcontenttype', 'getcontenttype'],
  ['{DAV:}getetag', 'getetag'],
  ['{http://owncloud.org/ns}fileid', 'fileid'],
  ['{http://owncloud.org/ns}checksums', 'checksums'],
  ['{http://nextcloud.org/ns}creation_time', 'creation_time'],
  [`{${MOD_DAV_FS_NAMESPACE}}executable`, 'executable'],
]);

const DAV = 'DAV:';

/** One `<response>`: its href, the 2xx properties by key, whether it is a collection, whether any propstat was 2xx, its own status if it has no propstat, and every status it gave. */
interface DavResponse {
  href: string;
  props: Record<string, string>;
  collection: boolean;
  found: boolean;
  status: number | null;
  statuses: (number | null)[];
}

/** `HTTP/1.1 200 OK` → 200; null when unreadable */
function statusCode(line: string): number | null {
  const match = /^\s*HTTP\/[\d.]+\s+(\d{3})/.exec(line);
  return match ? Number(match[1]) : null;
}

function unreadable(what: string, why: string): FerryError {
  return new FerryError(502, 'upstream_error', `The WebDAV server's answer for ${what} is not a WebDAV listing Ferry can read (${why}).`);
}

function parseResponses(xml: string, what: string): DavResponse[] {
  const parser = new SaxesParser({ xmlns: true, position: false });
  const responses: DavResponse[] = [];
  // the path of open elements below <response>, as Clark names; what is being gathered
  const open: string[] = [];
  let response: DavResponse | null = null;
  let propstat: { props: Record<string, string>; collection: boolean; status: number | null } | null = null;
  let text: string[] | null = null;
  let sawMultistatus = false;
  parser.on('opentag', (tag) => {
    const name = `{${tag.uri}}${tag.local}`;
    if (open.length === 0 && name === `{${DAV}}multistatus`) sawMultistatus = true;
    open.push(name);
    const depth = open.length;
    if (depth === 2 && name === `{${DAV}}response`) response = { href: '', props: {}, collection: false, found: false, status: null, statuses: [] };
    else if (!response) return;
    else if (depth === 3 && name === `{${DAV}}propstat`) propstat = { props: {}, collection: false, status: null };
    else if (depth === 3 && (name === `{${DAV}}href` || name === `{${DAV}}status`)) text = [];
    else if (depth === 5 && propstat && open[3] === `{${DAV}}prop`) text = [];
    else if (depth === 4 && propstat && name === `{${DAV}}status`) text = [];
    else if (depth === 6 && propstat && open[4] === `{${DAV}}resourcetype` && name === `{${DAV}}collection`) propstat.collection = true;
    // a value's nested elements (oc:checksums' oc:checksum): their texts apart by a space
    if (depth > 5 && text) text.push(' ');
  });
  parser.on('text', (chunk) => text?.push(chunk));
  parser.on('cdata', (chunk) => text?.push(chunk));
  parser.on('closetag', () => {
    const name = open.pop()!;
    const depth = open.length + 1;
    const current = response as DavResponse | null;
    if (!current) return;
    if (depth === 5 && propstat && text && open[3] === `{${DAV}}prop`) {
      const key = PROPERTY_KEYS.get(name);
      if (key) propstat.props[key] = text.join('').trim();
      text = null;
    } else if (depth === 4 && propstat && text && name === `{${DAV}}status`) {
      propstat.status = statusCode(text.join(''));
      current.statuses.push(propstat.status);
      text = null;
    } else if (depth === 3 && text && name === `{${DAV}}href`) {
      current.href = text.join('').trim();
      text = null;
    } else if (depth === 3 && text && name === `{${DAV}}status`) {
      current.status = statusCode(text.join(''));
      current.statuses.push(current.status);
      text = null;
    } else if (depth === 3 && propstat && name === `{${DAV}}propstat`) {
      if (propstat.status !== null && propstat.status >= 200 && propstat.status < 300) {
        Object.assign(current.props, propstat.props);
        current.collection ||= propstat.collection;
        current.found = true;
      }
      propstat = null;
    } else if (depth === 2 && name === `{${DAV}}response`) {
      responses.push(current);
      response = null;
    }
  });
  try {
    parser.write(xml).close();
  } catch (error) {
    throw unreadable(what, (error as Error).message.split('\n')[0]!);
  }
  if (!sawMultistatus) throw unreadable(what, 'no DAV: multistatus element');
  return responses;
}

/** `href` (a path or an absolute URI, RFC 4918 §8.3) as a path below `basePath`, percent-decoded, without a trailing slash. */
function filenameOf(href: string, basePath: string, what: string): string {
  const hrefPath = href.replace(/^[a-z][a-z0-9+.-]*:\/\/[^/]*/i, '');
  let decoded: string;
  try {
    decoded = decodeURIComponent(hrefPath);
  } catch {
    throw unreadable(what, `the href '${href}' is not percent-encoded UTF-8`);
  }
  const relative = path.posix.relative(basePath, path.posix.join('/', decoded));
  const filename = `/${relative}`.replace(/\/+$/, '');
  return filename === '' ? '/' : filename;
}

function fileStatOf(response: DavResponse, basePath: string, what: string): FileStat {
  const { props } = response;
  const filename = filenameOf(response.href, basePath, what);
  const type = response.collection ? 'directory' : 'file';
  const stat: FileStat = {
    filename,
    basename: path.posix.basename(filename),
    lastmod: props.getlastmodified ?? '',
    size: Number.parseInt(props.getcontentlength ?? '0', 10) || 0,
    type,
    etag: props.getetag !== undefined ? props.getetag.replace(/"/g, '') : null,
    props: props as FileStat['props'],
  };
  if (type === 'file') stat.mime = props.getcontenttype?.split(';')[0] ?? '';
  return stat;
}

/**
 * The rows of a Depth 1 PROPFIND. `basePath`: the path of the server URL the target was given
 * ('/dav'), which hrefs begin with. A response with no 2xx propstat (only a status of its own:
 * a resource the server could not describe) is no row: nothing is known of it, not even its type.
 */
export function listingOf(xml: string, basePath: string, what: string): FileStat[] {
  return parseResponses(xml, what).flatMap((response) => (response.found ? [fileStatOf(response, basePath, what)] : []));
}

/**
 * The one resource of a Depth 0 PROPFIND. A response that carries no 2xx properties throws
 * with its status (a 404 inside the 207 is a missing resource, as the webdav client said).
 */
export function statOf(xml: string, basePath: string, what: string): FileStat {
  const [first] = parseResponses(xml, what);
  if (!first) throw unreadable(what, 'no response in it');
  if (!first.found) {
    const status = first.status !== null && first.status >= 400 ? first.status : 404;
    throw Object.assign(new Error(`HTTP ${status} inside the Multi-Status`), { status });
  }
  return fileStatOf(first, basePath, what);
}

/**
 * Every status a Multi-Status gave (each propstat's and each bare response's): a PROPPATCH's 207
 * says per property whether it was set (RFC 4918 §9.2). An unreadable status line reads as null.
 */
export function statusesOf(xml: string, what: string): (number | null)[] {
  return parseResponses(xml, what).flatMap((response) => response.statuses);
}

/**
 * The path of the server URL the target was given, percent-decoded, without a trailing slash
 * ('/' for none): the hrefs of its listings begin with it (filenameOf).
 */
export function basePathOf(url: string): string {
  const { pathname } = new URL(url);
  let decoded = pathname;
  try {
    decoded = decodeURIComponent(pathname);
  } catch {
    // not percent-encoded UTF-8: kept as it is
  }
  return decoded.replace(/\/+$/, '') || '/';
}
