import { fastPathOn } from '../../electron/core/fast-paths.js';
import { apacheUnavailableReason, startApacheWebdav } from './apache-webdav.js';
import type { RealWebdav } from './process.js';
import { rcloneUnavailableReason, startRcloneWebdav } from './rclone-webdav.js';
import { sabreUnavailableReason, startSabreNextcloud } from './sabre-nextcloud.js';

/**
 * The independent real WebDAV servers every WebDAV test runs against. One that cannot run
 * here is skipped with its reason printed, never silently.
 */
export interface RealWebdavKind {
  name: string;
  /** why it cannot run here, or null */
  unavailable: string | null;
  start(): Promise<RealWebdav>;
  /** set when its worker runs as another user who must own files the test makes on disk */
  ownerOfFiles?: string;
  /** what the server does with a modification time a client sends */
  keepsMtime: 'x-oc-mtime' | 'no';
  /**
   * whether Ferry recognises the server (by its OPTIONS answer) as Apache's mod_dav_fs, which
   * writes every PUT atomically, so each file is one PUT onto its name, and refuses to set
   * modification times (electron/core/targets/webdav/server-traits.ts; fast path `direct-puts`)
   */
  putsAtomically: boolean;
}

export const REAL_WEBDAV_SERVERS: RealWebdavKind[] = [
  // httpd refuses to serve as root: as root its workers run as nobody
  { name: 'Apache mod_dav', unavailable: apacheUnavailableReason(), start: startApacheWebdav, ownerOfFiles: process.getuid?.() === 0 ? 'nobody' : undefined, keepsMtime: 'no', putsAtomically: true },
  { name: 'rclone serve webdav', unavailable: rcloneUnavailableReason(), start: startRcloneWebdav, keepsMtime: 'no', putsAtomically: false },
  { name: 'SabreDAV with Nextcloud rules', unavailable: sabreUnavailableReason(), start: startSabreNextcloud, keepsMtime: 'x-oc-mtime', putsAtomically: false },
];

/**
 * Whether a write to this server, in this process, uses what Ferry knows of it (the fast path
 * may be off): once the server is recognised, each file one PUT onto its name and no PROPPATCH
 * of modification times.
 */
export function sendsDirectPuts(kind: RealWebdavKind): boolean {
  return kind.putsAtomically && fastPathOn('direct-puts');
}

for (const server of REAL_WEBDAV_SERVERS) {
  if (server.unavailable) console.warn(`[webdav tests] ${server.name} not run: ${server.unavailable}`);
}
