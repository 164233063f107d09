// 4.2 (collection), 4.3 (detail) and 4.4 (download) over any target, through the Target
// interface only. The resource segment is parsed from the raw path (see urls.ts) so that
// `<id>`, `<id>.json` and `<id>.zip` split on the final suffix and any id round-trips.
import type { FastifyInstance, FastifyReply } from 'fastify';
import type { ResourceDetail, ResourceSummary, TargetAction } from '../../../shared/api.js';
import { badRequest, notSupported } from '../../core/errors.js';
import type { ResourceInfo, ResourceNode, Target, TargetContext } from '../../core/target.js';
import { bagNameFor, writeBagZip } from '../../core/bag/bag-writer.js';
import { teeIntoLibrary, type DownloadLibrary } from '../../core/download-library.js';
import { capabilitiesOf } from '../../core/capabilities.js';
import { ROOT_CONTAINER, type NodeColumns } from '../../core/node-columns.js';
import { listWithSizes, LISTED_FIELDS } from './listing-sizes.js';
import { registerSelectionRoutes } from './selections.js';
import { clientGone, type ServerContext } from '../context.js';
import { errorResponses, ref, resourceParam, targetParam, tokenHeader } from '../schemas.js';
import { inBatches, jsonArrayStream, NEEDS_ROOM, TAKE_TEXT, type RowSerializer } from '../stream-json.js';
import { resolveTargetToken } from '../tokens.js';
import { MAX_QUERY_LENGTH, requireSearch, searchQueryFrom, sendSearch } from './search.js';
import { baseUrl, downloadUrl, encodeSegment, isPlainSegment, resourceFromPath, resourceUrl } from '../urls.js';

const ACTION_WORDS: Record<TargetAction, string> = {
  resource_collection: 'listing its resources',
  resource_detail: 'showing resource details',
  resource_download: 'downloading',
  resource_upload: 'uploading',
};

/** 405 with a sentence naming the target and the flag, for any action a target declines. */
export function requireAction(target: Target, action: TargetAction): void {
  if (!target.info.supported_actions[action]) {
    throw notSupported(`${target.info.readable_name} does not support ${ACTION_WORDS[action]} (its ${action} flag is false).`);
  }
}

export function toSummary(node: ResourceNode, base: string, targetName: string): ResourceSummary {
  return {
    kind: node.kind,
    kind_name: node.kind_name,
    id: node.id,
    container: node.container ?? 'None',
    title: node.title,
    detail: resourceUrl(base, targetName, node.id),
  };
}

/**
 * One listing row as JSON text: the same bytes as JSON.stringify(toSummary(...)), made with
 * as little per row as possible (listings run to 100,000 rows): the URL prefix once per
 * listing, the container's JSON once per run of rows in the same folder, and ids that are
 * plain URL-safe text (base64url and the like; see TargetInfo.plainIds) written without
 * escaping or encoding. Its `into` writes the same bytes straight into the listing's buffer
 * (see RowSerializer): the constant parts and the container's JSON are copied as bytes, and
 * the id, written once, is copied again for the detail link. Its `columnInto` does the same
 * for rows a target hands over as columns of bytes (NodeColumns: the offline index).
 */
export function summaryWriter(base: string, targetName: string, plainIds = false): RowSerializer<ResourceNode, NodeColumns> {
  const prefix = JSON.stringify(resourceUrl(base, targetName, '')).slice(0, -1);
  let lastContainer: string | null = null;
  let lastContainerJson = '"None"';
  const text = (node: ResourceNode): string => {
    if (node.container !== lastContainer) {
      lastContainer = node.container;
      lastContainerJson = jsonString(node.container ?? 'None');
    }
    const id = node.id;
    const plain = plainIds || isPlainSegment(id);
    const idJson = plain ? `"${id}"` : JSON.stringify(id);
    const detailTail = plain ? `${id}"` : JSON.stringify(encodeSegment(id)).slice(1);
    return `{"kind":"${node.kind}","kind_name":"${node.kind_name}","id":${idJson},"container":${lastContainerJson},"title":${jsonString(node.title)},"detail":${prefix}${detailTail}}`;
  };

  // the bytes of a row around its id, title and container: `{"kind":…,"id":"` by kind, then
  // `","container":<its JSON>,"title":` (per run of one container), then `,"detail":<prefix>`
  const heads = new Map<string, Buffer>();
  const headOf = (node: ResourceNode): Buffer => {
    const key = `${node.kind}\n${node.kind_name}`;
    let head = heads.get(key);
    if (head === undefined) {
      head = Buffer.from(`{"kind":${JSON.stringify(node.kind)},"kind_name":${JSON.stringify(node.kind_name)},"id":"`, 'utf8');
      heads.set(key, head);
    }
    return head;
  };
  const itemHead = Buffer.from('{"kind":"item","kind_name":"file","id":"', 'latin1');
  const folderHead = Buffer.from('{"kind":"container","kind_name":"folder","id":"', 'latin1');
  const detail = Buffer.from(`,"detail":${prefix}`, 'utf8');
  let middleContainer: string | null | undefined;
  let middle = Buffer.alloc(0);
  text.into = (node: ResourceNode, out: Buffer, at: number, end: number): number => {
    const id = node.id;
    if (!plainIds && !isPlainSegment(id)) return TAKE_TEXT;
    if (node.container !== middleContainer) {
      middleContainer = node.container;
      middle = Buffer.from(`","container":${jsonString(node.container ?? 'None')},"title":`, 'utf8');
    }
    const head =
      node.kind === 'item' && node.kind_name === 'file' ? itemHead : node.kind === 'container' && node.kind_name === 'folder' ? folderHead : headOf(node);
    const title = node.title;
    const titleJson = NEEDS_JSON_ESCAPE.test(title) ? JSON.stringify(title) : null;
    // UTF-8 takes at most 3 bytes per UTF-16 code unit; a plain id is ASCII
    const most = head.length + 2 * id.length + middle.length + 3 * (titleJson === null ? title.length + 2 : titleJson.length) + detail.length + 2;
    if (at + most > end) return NEEDS_ROOM;
    out.set(head, at);
    at += head.length;
    const idStart = at;
    at += latin1Write(out, id, at);
    const idEnd = at;
    out.set(middle, at);
    at += middle.length;
    if (titleJson === null) {
      out[at++] = 0x22;
      at += utf8Write(out, title, at);
      out[at++] = 0x22;
    } else {
      at += utf8Write(out, titleJson, at);
    }
    out.set(detail, at);
    at += detail.length;
    out.copyWithin(at, idStart, idEnd);
    at += idEnd - idStart;
    out[at++] = 0x22;
    out[at++] = 0x7d;
    return at;
  };

  // rows given as columns: every id, container and plain title is a range of the columns' bytes
  let columnHeads: { prefix: Uint8Array; item: Buffer; folder: Buffer } | null = null;
  let lastColumns: NodeColumns | null = null;
  let lastStart = -1;
  let lastEnd = -1;
  let columnMiddle = Buffer.alloc(0);
  text.columnInto = (columns: NodeColumns, row: number, out: Buffer, at: number, end: number): number => {
    const { idPrefix, idText } = columns;
    if (columnHeads === null || columnHeads.prefix !== idPrefix) {
      // the ids' common prefix joins the constant bytes before each id
      columnHeads = {
        prefix: idPrefix,
        item: Buffer.concat([itemHead, idPrefix]),
        folder: Buffer.concat([folderHead, idPrefix]),
      };
    }
    const containerStart = columns.containerStart[row]!;
    const containerEnd = columns.containerEnd[row]!;
    if (containerStart !== lastStart || containerEnd !== lastEnd || columns !== lastColumns) {
      lastColumns = columns;
      lastStart = containerStart;
      lastEnd = containerEnd;
      const container =
        containerStart === ROOT_CONTAINER ? [columns.rootId] : [idPrefix, idText.subarray(containerStart, containerEnd)];
      columnMiddle = Buffer.concat([CONTAINER_OPEN, ...container, TITLE_OPEN]);
    }
    const idStart = columns.idStart[row]!;
    const idEnd = columns.idEnd[row]!;
    const plainTitle = columns.titlePlain[row] === 1;
    const titleJson = plainTitle ? '' : JSON.stringify(columns.titleText(row));
    const titleBytes = plainTitle ? columns.titleEnd[row]! - columns.titleStart[row]! + 2 : 3 * titleJson.length;
    const head = columns.folder[row] === 1 ? columnHeads.folder : columnHeads.item;
    if (at + head.length + columnMiddle.length + titleBytes + detail.length + idPrefix.length + 2 * (idEnd - idStart) + 2 > end) return NEEDS_ROOM;
    out.set(head, at);
    at += head.length;
    // the id whole (prefix and all), copied again for the detail link
    const idAt = at - idPrefix.length;
    at = copyBytes(idText, idStart, idEnd, out, at);
    const idLength = at - idAt;
    out.set(columnMiddle, at);
    at += columnMiddle.length;
    if (plainTitle) {
      out[at++] = 0x22;
      at = copyBytes(columns.pathBytes, columns.titleStart[row]!, columns.titleEnd[row]!, out, at);
      out[at++] = 0x22;
    } else {
      at += utf8Write(out, titleJson, at);
    }
    out.set(detail, at);
    at += detail.length;
    out.copyWithin(at, idAt, idAt + idLength);
    at += idLength;
    out[at++] = 0x22;
    out[at++] = 0x7d;
    return at;
  };
  return text as RowSerializer<ResourceNode, NodeColumns>;
}

const CONTAINER_OPEN = Buffer.from('","container":"', 'latin1');
const TITLE_OPEN = Buffer.from('","title":', 'latin1');

/** `source[start..end)` into `out` at `at`; returns the end. Short runs by hand: a subarray per copy costs more. */
function copyBytes(source: Uint8Array, start: number, end: number, out: Buffer, at: number): number {
  if (end - start <= 32) {
    for (let i = start; i < end; i++) out[at++] = source[i]!;
    return at;
  }
  out.set(source.subarray(start, end), at);
  return at + end - start;
}

/**
 * Buffer's own encoders, without Buffer.write's argument handling (which cost more than the
 * encoding of a short id or title, twice a row). Undocumented, so write stands in where they are gone.
 */
type DirectWrites = Buffer & { latin1Write(text: string, at: number): number; utf8Write(text: string, at: number): number };
const direct = Buffer.prototype as Partial<DirectWrites>;
const latin1Write: (out: Buffer, text: string, at: number) => number =
  typeof direct.latin1Write === 'function' ? (out, text, at) => (out as DirectWrites).latin1Write(text, at) : (out, text, at) => out.write(text, at, 'latin1');
const utf8Write: (out: Buffer, text: string, at: number) => number =
  typeof direct.utf8Write === 'function' ? (out, text, at) => (out as DirectWrites).utf8Write(text, at) : (out, text, at) => out.write(text, at, 'utf8');

/** Characters JSON.stringify writes as escapes (lone surrogates included); most names have none. */
// eslint-disable-next-line no-control-regex -- control characters are exactly what JSON escapes
const NEEDS_JSON_ESCAPE = /["\\\u0000-\u001f\ud800-\udfff]/;

function jsonString(value: string): string {
  return NEEDS_JSON_ESCAPE.test(value) ? JSON.stringify(value) : `"${value}"`;
}

export function toDetail(info: ResourceInfo, base: string, targetName: string): ResourceDetail {
  return {
    kind: info.kind,
    kind_name: info.kind_name,
    id: info.id,
    title: info.title,
    date_created: info.date_created,
    date_modified: info.date_modified,
    hashes: info.hashes,
    extra: info.extra,
    download_url: downloadUrl(base, targetName, info.id),
  };
}

/** `filename="..."` in ASCII, plus RFC 5987 `filename*` when the name needs more. */
export function attachmentDisposition(filename: string): string {
  const ascii = filename.replace(/[^\x20-\x7e]/g, '_').replace(/["\\]/g, '_');
  if (ascii === filename) return `attachment; filename="${filename}"`;
  const encoded = encodeURIComponent(filename).replace(/['()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
  return `attachment; filename="${ascii}"; filename*=UTF-8''${encoded}`;
}

type TargetParams = { Params: { target: string }; Querystring: { container?: string; fields?: string; q?: string; page?: string } };

export function registerResourceRoutes(app: FastifyInstance, context: ServerContext): void {
  const { core } = context;
  const sourceHeaders = { type: 'object', properties: { 'service-source-token': tokenHeader('source') } };

  app.get<TargetParams>(
    '/api_v1/targets/:target/resources/',
    {
      schema: {
        summary: 'List resources (4.2): flat, nesting through `container`; or search them with `q`',
        description:
          'Streams every resource the token can see. Extension: `?container=None` lists the top level only, ' +
          '`?container=<id>` the direct children of that folder. Extension (docs/api.md "Search"): `?q=<text>&page=<n>` ' +
          "answers one page (up to 50 rows) of the target's search, within what the token can see: the service's own " +
          'index where it has one, else a bounded name match (header `ferry-search-method: index|names`; ' +
          '`ferry-search-truncated: true` when a name walk stopped early). The next page is in `Link: <…>; rel="next"`. ' +
          'A target whose `capabilities.search` is false answers 405.',
        tags: ['resources'],
        params: { type: 'object', required: ['target'], properties: { target: targetParam } },
        querystring: {
          type: 'object',
          properties: {
            container: { type: 'string' },
            fields: {
              type: 'string',
              enum: [LISTED_FIELDS],
              description:
                `Extension, with \`container\` only: \`fields=${LISTED_FIELDS}\` adds \`size\` (bytes, null for a folder ` +
                'or when unknown) and `date_modified` (contract timestamp or null) to every row, read for the whole level ' +
                'before the answer starts, so a client can sort the level on complete data. Costs one look per row.',
            },
            q: { type: 'string', maxLength: MAX_QUERY_LENGTH, description: 'search text; with it the answer is one page of matches' },
            page: { type: 'string', pattern: '^[0-9]+$', description: 'with q: the page, from 1 (default 1)' },
          },
        },
        headers: sourceHeaders,
        response: { 200: { type: 'array', items: ref('ResourceSummary') }, ...errorResponses(400, 401, 403, 404, 405, 429, 502, 503) },
      },
    },
    async (request, reply) => {
      const target = core.targets.get(request.params.target);
      requireAction(target, 'resource_collection');
      const search = request.query.q === undefined ? null : searchQueryFrom(request.query);
      if (search) requireSearch(target);
      const ctx: TargetContext = { token: await resolveTargetToken(core, target, request, 'source'), signal: clientGone(request, reply) };
      if (search) return sendSearch(request, reply, target, ctx, search, toSummary);
      const container = request.query.container;
      const scope = container === undefined ? undefined : { container: container === 'None' ? null : container };
      const base = baseUrl(request);
      const name = target.info.name;
      if (request.query.fields !== undefined) {
        if (!scope) throw badRequest(`fields=${LISTED_FIELDS} lists one level: add container=None or container=<folder id>.`);
        const rows = await listWithSizes(target, ctx, scope, base);
        return reply.type('application/json; charset=utf-8').send(JSON.stringify(rows));
      }
      const capabilities = capabilitiesOf(target);
      const batches = capabilities.columnarListing
        ? capabilities.columnarListing.listColumns(ctx, scope)
        : target.listBatches
          ? target.listBatches(ctx, scope)
          : inBatches(target.list(ctx, scope));
      // the response's writableLength counts what waits in it and in its socket, and a write the kernel has not taken whole
      const body = await jsonArrayStream(batches, summaryWriter(base, name, target.info.plainIds), `${base} ${name}`, {
        written: () => reply.raw.writableLength === 0,
        isKept: capabilities.cacheableListings?.isKept,
      });
      return reply.type('application/json; charset=utf-8').send(body);
    },
  );

  // `<id>` and `<id>.json` give the detail, `<id>.zip` the download (one route: the suffix
  // is part of the one path segment)
  app.get<{ Params: { target: string; resource: string }; Querystring: { keep?: string } }>(
    '/api_v1/targets/:target/resources/:resource/',
    {
      schema: {
        summary: 'A resource: `<id>.json/` its detail (4.3), `<id>.zip/` its download (4.4), `<id>/` its detail',
        description:
          'The download is a BagIt bag in a ZIP, streamed, with `Content-Disposition: attachment; ' +
          'filename="<t>_download_<id-safe>.zip"`. A download that fails part-way is cut off (the connection ' +
          'is aborted), never ended as if complete.',
        tags: ['resources'],
        params: { type: 'object', required: ['target', 'resource'], properties: { target: targetParam, resource: resourceParam } },
        querystring: {
          type: 'object',
          properties: {
            keep: {
              type: 'string',
              enum: ['1', 'true', '0', 'false'],
              description: '`.zip/` only: also keep a copy in the offline library ("Downloaded ZIPs"); it appears there once complete',
            },
          },
        },
        headers: sourceHeaders,
        produces: ['application/json', 'application/zip'],
        response: {
          200: {
            description: 'ResourceDetail (for `.json` and the bare id) or the ZIP bytes (for `.zip`)',
            content: {
              'application/json': { schema: ref('ResourceDetail') },
              'application/zip': { schema: { type: 'string', format: 'binary' } },
            },
          },
          ...errorResponses(400, 401, 403, 404, 405, 429, 502, 503),
        },
      },
    },
    async (request, reply) => {
      const target = core.targets.get(request.params.target);
      const { id, view } = resourceFromPath(request);
      requireAction(target, view === 'zip' ? 'resource_download' : 'resource_detail');
      const signal = clientGone(request, reply);
      const ctx: TargetContext = { token: await resolveTargetToken(core, target, request, 'source'), signal };
      if (view !== 'zip') {
        return reply.type('application/json; charset=utf-8').send(toDetail(await target.detail(ctx, id), baseUrl(request), target.info.name));
      }
      const keep = request.query.keep === '1' || request.query.keep === 'true';
      return sendDownload(reply, target, ctx, id, keep ? core.library : null);
    },
  );

  registerSelectionRoutes(app, context);
}

async function sendDownload(reply: FastifyReply, target: Target, ctx: TargetContext, id: string, library: DownloadLibrary | null): Promise<FastifyReply> {
  const read = await target.read(ctx, id);
  const bagName = bagNameFor(target.info.name, id);
  // "Keep offline": the same bytes also go to the library, under a temporary name until
  // whole. Without it the response is the ZIP's one reader (Fastify pipes the stream
  // straight into it), so bytes may be lent to it.
  let zip = writeBagZip(read, { targetName: target.info.name, resourceId: id, bagName, signal: ctx.signal, lendTo: library ? undefined : reply.raw });
  if (library) zip = teeIntoLibrary(zip, await library.keep(bagName));
  return reply
    .type('application/zip')
    .header('content-disposition', attachmentDisposition(`${bagName}.zip`))
    .header('cache-control', 'no-store')
    .send(zip);
}
