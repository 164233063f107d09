// Filtering and sorting of one listing level. Pure, so it is cheap to test and to memoise.
// Folders come first (as in every file manager). Size and date come from the listing row
// itself (a listing asked for with sizes carries them for the whole level), never from
// details fetched for the rows on screen: a sort over part of the level would put rows in
// an order that changes as one scrolls. Unknown values sort last whatever the direction;
// ties fall back to the name, then the id, so the order is total and stable.
import type { ResourceDetail, ResourceSummary } from '../../../shared/api.js';

export type SortKey = 'title' | 'kind' | 'size' | 'modified';
export type SortDirection = 'asc' | 'desc';
export interface SortOrder {
  key: SortKey;
  dir: SortDirection;
}

const collator = new Intl.Collator(undefined, { numeric: true, sensitivity: 'base' });

export function sizeOf(detail: ResourceDetail | undefined): number | null {
  const size = detail?.extra?.size;
  return typeof size === 'number' && Number.isFinite(size) ? size : null;
}

/** A timestamp as an instant (milliseconds since the epoch), so zones and precision never matter. */
export function instantOf(value: string | null | undefined): number | null {
  if (!value) return null;
  const time = Date.parse(value);
  return Number.isNaN(time) ? null : time;
}

export function modifiedOf(detail: ResourceDetail | undefined): number | null {
  return instantOf(detail?.date_modified);
}

/** Whether sorting by this key needs every row's size or date (see PaneState.sized). */
export function needsSizes(sort: SortOrder): boolean {
  return sort.key === 'size' || sort.key === 'modified';
}

function rowSize(row: ResourceSummary): number | null {
  return typeof row.size === 'number' && Number.isFinite(row.size) ? row.size : null;
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

export function arrangeRows(items: readonly ResourceSummary[], filter: string, sort: SortOrder): ResourceSummary[] {
  const dir = sort.dir === 'asc' ? 1 : -1;
  const rows = filter.trim() ? items.filter((item) => matchesFilter(item.title, filter)) : items.slice();
  rows.sort((a, b) => {
    const folderFirst = (a.kind === 'container' ? 0 : 1) - (b.kind === 'container' ? 0 : 1);
    if (folderFirst !== 0) return folderFirst;
    let result = 0;
    if (sort.key === 'size') result = compareNullable(rowSize(a), rowSize(b), dir);
    else if (sort.key === 'modified') result = compareNullable(instantOf(a.date_modified), instantOf(b.date_modified), dir);
    else if (sort.key === 'kind') result = collator.compare(a.kind_name, b.kind_name) * dir;
    if (result === 0) result = collator.compare(a.title, b.title) * (sort.key === 'title' ? dir : 1);
    if (result === 0) result = a.id < b.id ? -1 : a.id > b.id ? 1 : 0;
    return result;
  });
  return rows;
}
