// Filtering and sorting of one listing level. Pure, so it is cheap to test and to memoise.
// Folders come first (as in every file manager); size and date come from details that
// may not be loaded yet: unknown values sort last whatever the direction.
import type { ResourceDetail, ResourceSummary } from '../../../shared/api.js';

export type SortKey = 'title' | 'kind' | 'size' | 'modified';
export type SortDirection = 'asc' | 'desc';
export interface SortOrder {
  key: SortKey;
  dir: SortDirection;
}

export type DetailLookup = (id: string) => ResourceDetail | undefined;

const collator = new Intl.Collator(undefined, { numeric: true, sensitivity: 'base' });

export function sizeOf(detail: ResourceDetail | undefined): number | null {
  const size = detail?.extra?.size;
  return typeof size === 'number' && Number.isFinite(size) ? size : null;
}

export function modifiedOf(detail: ResourceDetail | undefined): number | null {
  const value = detail?.date_modified;
  if (!value) return null;
  const time = Date.parse(value);
  return Number.isNaN(time) ? null : time;
}

/** Case-insensitive substring match on the title; `*` and `?` work as wildcards. */
export function matchesFilter(title: string, filter: string): boolean {
  const needle = filter.trim();
  if (needle === '') return true;
  if (/[*?]/.test(needle)) {
    const pattern = needle.replace(/[.+^${}()|[\]\\]/g, '\\$&').replace(/\*/g, '.*').replace(/\?/g, '.');
    return new RegExp(pattern, 'i').test(title);
  }
  return title.toLocaleLowerCase().includes(needle.toLocaleLowerCase());
}

function compareNullable(a: number | null, b: number | null, dir: number): number {
  if (a === null && b === null) return 0;
  if (a === null) return 1;
  if (b === null) return -1;
  return (a - b) * dir;
}

export function arrangeRows(
  items: readonly ResourceSummary[],
  filter: string,
  sort: SortOrder,
  detailOf: DetailLookup = () => undefined,
): ResourceSummary[] {
  const dir = sort.dir === 'asc' ? 1 : -1;
  const rows = filter.trim() ? items.filter((item) => matchesFilter(item.title, filter)) : items.slice();
  rows.sort((a, b) => {
    const folderFirst = (a.kind === 'container' ? 0 : 1) - (b.kind === 'container' ? 0 : 1);
    if (folderFirst !== 0) return folderFirst;
    let result = 0;
    if (sort.key === 'size') result = compareNullable(sizeOf(detailOf(a.id)), sizeOf(detailOf(b.id)), dir);
    else if (sort.key === 'modified')
      result = compareNullable(modifiedOf(detailOf(a.id)), modifiedOf(detailOf(b.id)), dir);
    else if (sort.key === 'kind') result = collator.compare(a.kind_name, b.kind_name) * dir;
    if (result === 0) result = collator.compare(a.title, b.title) * (sort.key === 'title' ? dir : 1);
    return result;
  });
  return rows;
}
