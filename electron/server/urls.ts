// URLs the API hands out, and the reverse: ids out of a request's raw path.
import type { FastifyRequest } from 'fastify';
import { badRequest } from '../core/errors.js';

/** The scheme and Host the client used (the gate has already checked the Host). */
export function baseUrl(request: FastifyRequest): string {
  return `${request.protocol}://${request.headers.host ?? `${request.hostname}`}`;
}

/**
 * One path segment for an id. '.' is encoded too, so a `.json`/`.zip` suffix we append is
 * always the only literal dot and any id round-trips, even one that itself ends in ".json".
 */
export function encodeSegment(value: string): string {
  // Most ids (base64url and the like) need no encoding: skip the work on 100,000-row listings.
  if (isPlainSegment(value)) return value;
  return encodeURIComponent(value).replace(/\./g, '%2E');
}

const PLAIN_SEGMENT = /^[A-Za-z0-9_~-]+$/;

/** Text that is one URL path segment as it stands (and plain JSON text too: no quote, backslash or control). */
export const isPlainSegment = (value: string) => PLAIN_SEGMENT.test(value);

export const targetUrl = (base: string, name: string) => `${base}/api_v1/target/${encodeSegment(name)}/`;
export const resourceUrl = (base: string, target: string, id: string) =>
  `${base}/api_v1/targets/${encodeSegment(target)}/resources/${encodeSegment(id)}`;
export const downloadUrl = (base: string, target: string, id: string) =>
  `${base}/api_v1/targets/${encodeSegment(target)}/resources/${encodeSegment(id)}.zip/`;
export const jobPath = (ticket: string) => `/api_v1/jobs/${encodeSegment(ticket)}/`;

export type ResourceView = 'detail' | 'json' | 'zip';

/**
 * The resource segment of `.../resources/<segment>[/]`, split on its FINAL suffix before
 * decoding (a literal '.' only ever comes from the suffix), then decoded exactly once.
 */
export function resourceFromPath(request: FastifyRequest): { id: string; view: ResourceView } {
  const rawUrl = request.raw.url ?? '';
  const query = rawUrl.indexOf('?');
  let rawPath = query === -1 ? rawUrl : rawUrl.slice(0, query);
  if (rawPath.endsWith('/')) rawPath = rawPath.slice(0, -1);
  let segment = rawPath.slice(rawPath.lastIndexOf('/') + 1);
  let view: ResourceView = 'detail';
  const suffix = /\.(json|zip)$/i.exec(segment);
  if (suffix) {
    view = suffix[1]!.toLowerCase() as ResourceView;
    segment = segment.slice(0, -suffix[0].length);
  }
  let id: string;
  try {
    id = decodeURIComponent(segment);
  } catch {
    throw badRequest('The resource id in the path is not valid percent-encoding.');
  }
  if (!id) throw badRequest('The resource id in the path is empty.');
  return { id, view };
}
