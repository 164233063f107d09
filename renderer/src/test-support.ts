// Fakes shared by the renderer tests.
import type { Job, ResourceDetail, ResourceSummary } from '../../shared/api.js';

export function summary(id: string, title: string, kind: 'container' | 'item' = 'item', container = 'None'): ResourceSummary {
  return {
    kind,
    kind_name: kind === 'container' ? 'folder' : 'file',
    id,
    container,
    title,
    detail: `http://127.0.0.1:1/api_v1/targets/local/resources/${id}`,
  };
}

export function detail(id: string, title: string, size: number, modified: string): ResourceDetail {
  return {
    kind: 'item',
    kind_name: 'file',
    id,
    title,
    date_created: modified,
    date_modified: modified,
    hashes: { md5: 'd41d8cd98f00b204e9800998ecf8427e' },
    extra: { size },
    download_url: '',
  };
}

export function job(ticket: string, status: Job['status'], bytes = 0, total: number | null = 1000, created = '2026-01-01T00:00:00.000000Z'): Job {
  return {
    ticket_number: ticket,
    kind: 'transfer',
    status,
    target: 'local',
    resource_id: null,
    created,
    started: null,
    finished: null,
    progress: { files_done: 0, files_total: 1, bytes_done: bytes, bytes_total: total },
    report: null,
    error: null,
  };
}

export class MemoryStorage implements Storage {
  private map = new Map<string, string>();
  get length() {
    return this.map.size;
  }
  clear() {
    this.map.clear();
  }
  getItem(key: string) {
    return this.map.get(key) ?? null;
  }
  key(index: number) {
    return [...this.map.keys()][index] ?? null;
  }
  removeItem(key: string) {
    this.map.delete(key);
  }
  setItem(key: string, value: string) {
    this.map.set(key, String(value));
  }
}
