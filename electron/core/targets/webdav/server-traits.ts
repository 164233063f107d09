/**
 * What one OPTIONS answer (RFC 4918 §10.1) tells Ferry of a WebDAV server, beyond the RFC:
 * traits known from the server's source and probed on the real server here, which let a write
 * send fewer requests. A server Ferry does not recognise has none, and gets the requests that
 * are safe on any server. A miss costs requests; a false match could cost a file, so each
 * recognition asks for evidence that the repository behind the URL is the one the trait holds
 * for, not merely something in front of it.
 *
 * Recognised: Apache httpd's mod_dav_fs. Its OPTIONS answer lists mod_dav_fs's own property set,
 * `DAV: <http://apache.org/dav/propset/fs/1>` (`dav_fs_gather_propsets`, modules/dav/fs/repos.c),
 * which only mod_dav_fs adds, so the PUT will be written by mod_dav_fs itself (Apache as a
 * reverse proxy passes on its backend's headers, and adds its own `Server` to a backend that
 * sends none, so `Server: Apache` alone proves nothing).
 *
 * Not recognised, each for its evidence: rclone serve webdav and SabreDAV's FS tree write a PUT
 * in place (a cut PUT leaves part of the file: server-traits.test.ts, docs/targets/webdav.md);
 * Nextcloud/ownCloud write a part file and rename it (apps/dav `File::put`) unless the storage
 * needs none (`needsPartFile()`: object stores, or a part file it may not create), so a new file
 * keeps the temporary name there (an update already goes in place, for its file id).
 */

/** mod_dav_fs's property set, in the `DAV` header of its OPTIONS answers */
const MOD_DAV_FS_PROPSET = '<http://apache.org/dav/propset/fs/1>';

export interface OptionsAnswer {
  /** the `Server` header, or null */
  server: string | null;
  /** the `DAV` header, several joined with ", " as HTTP does, or null */
  dav: string | null;
}

export interface ServerTraits {
  /**
   * Every PUT is written into a temporary file of the server's own, renamed over the name only
   * once the whole body has arrived and removed otherwise, so one PUT onto a file's own name is
   * as safe as Ferry's PUT to a temporary name and MOVE: no reader sees half a file, a cut or
   * refused PUT leaves the name as it was, a crash of Ferry mid-PUT leaves nothing.
   * mod_dav_fs since httpd 2.3.3 (commit 071c3e84f9, 2009: `dav_fs_open_stream` opens a PUT as
   * `DAV_FS_TMP_PREFIX` + 6 characters beside the target, `dav_fs_close_stream` renames it over
   * the target on commit and removes it otherwise, a pool cleanup if the request dies); 2.2 wrote
   * in place and has the same property set, so the `Server` header must name 2.4 or later, and
   * one that hides its version (`ServerTokens Prod`) is not taken.
   */
  atomicPuts: boolean;
  /**
   * A PROPPATCH of `DAV:getlastmodified` is refused (so a write sends none): mod_dav_fs's live
   * properties are read-only but `executable` (`dav_fs_props`, `dav_fs_is_writable`, since 2000;
   * Apache answers `409 Property is read-only.` in the 207).
   */
  refusesLastModified: boolean;
}

export const UNKNOWN_SERVER: ServerTraits = { atomicPuts: false, refusesLastModified: false };

/** The traits of a server that answered OPTIONS so (see above). */
export function traitsOf(answer: OptionsAnswer): ServerTraits {
  const modDavFs = !!answer.dav && answer.dav.split(',').some((token) => token.trim() === MOD_DAV_FS_PROPSET);
  if (!modDavFs) return UNKNOWN_SERVER;
  const version = /(?:^|\s)Apache\/(\d+)\.(\d+)(?:[.\s(]|$)/.exec(answer.server ?? '');
  const [major, minor] = version ? [Number(version[1]), Number(version[2])] : [0, 0];
  return { atomicPuts: major > 2 || (major === 2 && minor >= 4), refusesLastModified: true };
}
