// Which places the sidebar shows, in which group, with which icon: derived from the targets
// the core serves, so a place exists exactly when its target does. Pure, for tests.
import type { TargetDescription } from '../../shared/api.js';
import type { SessionTarget } from './api/app-types.js';
import type { IconName } from './components/icons.js';

export interface Place {
  target: string;
  label: string;
  icon: IconName;
  /** for a chosen local folder: its absolute path (shown as the tooltip and in the manager) */
  path?: string;
  /** a remote service with no account stored: browsing it will ask for one */
  needsAccount: boolean;
}

export interface PlaceGroup {
  title: 'This computer' | 'Library' | 'Services';
  places: Place[];
}

export const WORKSPACE_TARGET = 'local';
export const LIBRARY = 'offline';

export function isLocalRoot(target: string): boolean {
  return /^local-/.test(target);
}

export function placeGroups(
  targets: readonly TargetDescription[],
  session: readonly SessionTarget[],
  paths: Readonly<Record<string, string>>,
): PlaceGroup[] {
  const stored = new Map(session.map((t) => [t.name, t]));
  const computer: Place[] = [];
  const library: Place[] = [];
  const services: Place[] = [];
  for (const t of targets) {
    const info = stored.get(t.name);
    const needsAccount = info?.credential === 'remote' && !info.has_stored_token;
    const place: Place = { target: t.name, label: t.readable_name, icon: 'cloud', needsAccount };
    if (t.name === WORKSPACE_TARGET) computer.unshift({ ...place, icon: 'home' });
    else if (isLocalRoot(t.name)) computer.push({ ...place, icon: 'folder', ...(paths[t.name] ? { path: paths[t.name] } : {}) });
    else if (t.name === LIBRARY) library.push({ ...place, icon: 'archive' });
    else services.push({ ...place, icon: /git/i.test(t.name) ? 'git' : 'cloud' });
  }
  const groups: PlaceGroup[] = [
    { title: 'This computer', places: computer },
    { title: 'Library', places: library },
    { title: 'Services', places: services },
  ];
  return groups.filter((g) => g.places.length > 0 || g.title === 'This computer');
}
