/**
 * What Ferry knows of a WebDAV server beyond the RFC: traits known from the server's source and
 * probed on the real server here, which let a write send fewer requests. A server Ferry has not
 * recognised has none, and gets the requests that are safe on any server. A miss costs requests;
 * a false match could cost a file, so a recognition takes evidence that the repository which
 * stores the files is the one the traits hold for, not merely something beside or in front of it.
 *
 * Recognised: Apache httpd's mod_dav_fs, in two steps.
 * 1. The OPTIONS answer (RFC 4918 §10.1) lists mod_dav_fs's property set,
 *    `DAV: <http://apache.org/dav/propset/fs/1>` (`dav_fs_gather_propsets`), and `Server` names
 *    Apache httpd. That says mod_dav_fs is loaded, not that it serves this folder: mod_dav's
 *    OPTIONS gathers the sets of every loaded live-property provider (`dav_method_options`), so
 *    an Apache whose location is another repository (mod_dav_svn, iRODS's davrods) says the same
 *    when mod_dav_fs is loaded too, as a stock RHEL httpd loads it. (Apache as a reverse proxy
 *    passes on its backend's answer, with its own `Server` where the backend sends none.)
 * 2. A file of the destination, in a listing the write makes anyway or in one PROPFIND of the
 *    first file it wrote, carries mod_dav_fs's own live property `executable`
 *    (namespace `http://apache.org/dav/props/`, "T" or "F"): `dav_fs_find_liveprop` answers it
 *    only for a resource of mod_dav_fs's own repository, and only for a regular file.
 *
 * Not recognised, each for its evidence: rclone serve webdav and SabreDAV's FS tree write a PUT
 * in place (a cut PUT leaves part of the file: server-traits.test.ts, docs/targets/webdav.md);
 * Nextcloud/ownCloud write a part file and rename it (apps/dav `File::put`) unless the storage
 * needs none (`needsPartFile()`: object stores, or a part file it may not create), so a new file
 * keeps the temporary name there (an update already goes in place, for its file id).
 */

/** mod_dav_fs's property set, in the `DAV` header of its OPTIONS answers */
const MOD_DAV_FS_PROPSET = '<http://apache.org/dav/propset/fs/1>';
/** the namespace of mod_dav_fs's own live properties; Ferry's PROPFIND asks for its `executable` */
export const MOD_DAV_FS_NAMESPACE = 'http://apache.org/dav/props/';

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
   * in place, so `Server` must name 2.4 or later, and one that hides its version
   * (`ServerTokens Prod`) is not taken.
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

/**
 * Step 1: the traits a server would have if a file of the destination then shows it is
 * mod_dav_fs (step 2), from its OPTIONS answer; null for a server that cannot be mod_dav_fs.
 */
export function modDavFsTraits(answer: OptionsAnswer): ServerTraits | null {
  if (!answer.dav || !answer.dav.split(',').some((token) => token.trim() === MOD_DAV_FS_PROPSET)) return null;
  const server = answer.server ?? '';
  if (!/(?:^|\s)Apache(?:\/|\s|$)/.test(server)) return null;
  const version = /(?:^|\s)Apache\/(\d+)\.(\d+)/.exec(server);
  const [major, minor] = version ? [Number(version[1]), Number(version[2])] : [0, 0];
  return { atomicPuts: major > 2 || (major === 2 && minor >= 4), refusesLastModified: true };
}

/** Step 2: whether a listed file's properties carry mod_dav_fs's own `executable` (multistatus.ts keeps it only from mod_dav_fs's namespace). */
export function servedByModDavFs(props: Record<string, unknown> | undefined): boolean {
  return props?.executable === 'T' || props?.executable === 'F';
}

/**
 * One write's recognition of its server, the two steps above: the OPTIONS answer's candidate
 * (step 1) and a file of the destination carrying mod_dav_fs's own property (step 2), in
 * whichever order they come. `traits` holds what is known so far; UNKNOWN_SERVER until both.
 */
export class ServerRecognition {
  traits: ServerTraits = UNKNOWN_SERVER;
  private candidate: ServerTraits | null = null;
  private served = false;

  /** step 1: the traits the OPTIONS answer allows, or null */
  candidateIs(traits: ServerTraits | null): void {
    this.candidate = traits;
    this.settle();
  }

  /** step 2 for a listing's (or a look's) files, from their properties */
  sawFiles(files: readonly { type: string; props?: unknown }[]): void {
    if (files.some((file) => file.type === 'file' && servedByModDavFs(file.props as Record<string, unknown> | undefined))) this.servedHere();
  }

  /** step 2 from an earlier write into the same folder or one above it */
  servedHere(): void {
    this.served = true;
    this.settle();
  }

  /** step 1 holds and step 2 is still open: a look at a written file may settle it */
  get open(): boolean {
    return this.candidate !== null && !this.served;
  }

  /** both steps hold: mod_dav_fs stores the destination */
  get recognised(): boolean {
    return this.candidate !== null && this.served;
  }

  private settle(): void {
    if (this.candidate && this.served) this.traits = this.candidate;
  }
}
