// The editable path bar's one job: "project/raw/2024" in a target → the breadcrumb trail, by
// listing each level and finding the folder of that name. Ids are opaque, so a typed path
// can only be resolved by names, one level at a time. An exact name wins; otherwise one
// folder whose name differs only in case; otherwise a sentence saying which part is missing.
import { messageOf, type ApiClient } from '../api/client.js';
import type { Crumb } from './pane.js';

export type Resolved = { trail: Crumb[] } | { error: string };

/** The path as the bar shows it: "/" for the top, else "/a/b". */
export function pathText(trail: readonly Crumb[]): string {
  return `/${trail.map((crumb) => crumb.title).join('/')}`;
}

export async function resolvePath(
  api: Pick<ApiClient, 'children'>,
  target: string,
  targetName: string,
  text: string,
  signal?: AbortSignal,
): Promise<Resolved> {
  const names = text.split('/').map((part) => part.trim()).filter((part) => part !== '' && part !== '.');
  const trail: Crumb[] = [];
  for (const name of names) {
    if (name === '..') {
      trail.pop();
      continue;
    }
    const where = trail.at(-1)?.title ?? targetName;
    let rows;
    try {
      rows = await api.children(target, trail.at(-1)?.id ?? null, signal);
    } catch (error) {
      return { error: `${where} could not be listed to find “${name}”: ${messageOf(error)}` };
    }
    const exact = rows.filter((row) => row.title === name);
    const folded = exact.length ? exact : rows.filter((row) => row.title.toLocaleLowerCase() === name.toLocaleLowerCase());
    const match = folded.find((row) => row.kind === 'container') ?? folded[0];
    if (!match) return { error: `There is no “${name}” in ${where}.` };
    if (match.kind !== 'container') return { error: `“${match.title}” in ${where} is a file, not a folder.` };
    if (folded.filter((row) => row.kind === 'container').length > 1 && exact.length === 0) {
      return { error: `More than one folder in ${where} is called “${name}” in some spelling; type its name exactly.` };
    }
    trail.push({ id: match.id, title: match.title });
  }
  return { trail };
}
