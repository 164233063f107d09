// 4.5 / 4.6: POST into a folder (or to the top level). A multipart body is an upload (a
// spooled ZIP); a JSON body is a transfer from another target. Both become jobs: 202 with
// a ticket. Everything that can be refused is refused before the body is read.
import { rm } from 'node:fs/promises';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Acknowledgement, DuplicateFileAction, FolderMode, Job, TransferRequest } from '../../../shared/api.js';
import { ACKNOWLEDGEMENT_MESSAGE, DUPLICATE_FILE_ACTIONS, FOLDER_MODES, MAX_RESOURCES_PER_REQUEST } from '../../../shared/api.js';
import { badRequest, FerryError } from '../../core/errors.js';
import { PROVENANCE_FILE } from '../../core/provenance/format.js';
import { PROVENANCE_HEADER } from '../../core/provenance/job-hook.js';
import type { Target, TargetContext } from '../../core/target.js';
import { clientGone, type ServerContext } from '../context.js';
import { errorResponses, ref, resourceParam, targetParam, tokenHeader } from '../schemas.js';
import { FILE_FIELD, spoolUpload } from '../spool.js';
import { resolveTargetToken } from '../tokens.js';
import { jobPath, resourceFromPath } from '../urls.js';
import { requireAction } from './resources.js';
import { reviewedMetadata } from '../../core/metadata/model.js';

export function parseDuplicateAction(value: string | string[] | undefined): DuplicateFileAction {
  const text = (Array.isArray(value) ? value[0] : value)?.trim().toLowerCase();
  if (!text || !(DUPLICATE_FILE_ACTIONS as readonly string[]).includes(text)) {
    throw badRequest(
      `Send the header duplicate-file-action as 'ignore' (keep existing files), 'update' (replace files whose bytes differ), 'newer' (replace files older than the new one) or 'rename' (keep both, the new one renamed)${text ? `, not '${text.slice(0, 40)}'` : ''}.`,
      'invalid_duplicate_action',
    );
  }
  return text as DuplicateFileAction;
}

/** The multipart field of an upload that carries its per-file duplicate choices (a transfer's `duplicate_choices`, as JSON). */
export const CHOICES_FIELD = 'duplicate_choices';

/**
 * An upload's `duplicate_choices` field: a JSON object, each file's path in the ZIP (as POST
 * …/conflicts/ lists it) → its action. Checked here as the transfer body's schema checks the
 * same object; deciding what each does is the write planner's (core/plan/duplicates.ts).
 */
export function parseDuplicateChoices(text: string): Record<string, DuplicateFileAction> {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    value = undefined;
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw badRequest(`Send the form field ${CHOICES_FIELD} as a JSON object: each file's path in the ZIP → 'ignore', 'update', 'newer' or 'rename'.`, 'invalid_duplicate_action');
  }
  const entries = Object.entries(value);
  if (entries.length > MAX_RESOURCES_PER_REQUEST) throw badRequest(`${CHOICES_FIELD} names more than ${MAX_RESOURCES_PER_REQUEST} files; send the most common choice as duplicate-file-action and only the others here.`);
  const wrong = entries.find(([, action]) => !(DUPLICATE_FILE_ACTIONS as readonly unknown[]).includes(action));
  if (wrong) {
    throw badRequest(`The choice for ${JSON.stringify(wrong[0].slice(0, 200))} in ${CHOICES_FIELD} is not one of 'ignore', 'update', 'newer' or 'rename'.`, 'invalid_duplicate_action');
  }
  return Object.fromEntries(entries) as Record<string, DuplicateFileAction>;
}

/** `ferry-provenance: on | off` (absent: on): whether the job writes its provenance record. */
export function parseProvenanceHeader(value: string | string[] | undefined): boolean {
  const text = (Array.isArray(value) ? value[0] : value)?.trim().toLowerCase();
  if (text === undefined || text === '' || text === 'on') return true;
  if (text === 'off') return false;
  throw badRequest(`Send the header ${PROVENANCE_HEADER} as 'on' (the default: write ${PROVENANCE_FILE}) or 'off', not '${text.slice(0, 40)}'.`);
}

/** The request header that chooses a job's folder mode (FolderMode) for a destination that keeps no folders. */
export const FOLDERS_HEADER = 'ferry-folders';

/** The folder modes a write to `target` chooses among (the first, flatten, the default); none for a target that keeps folders. */
export function folderModesOf(target: Target): readonly FolderMode[] {
  return target.namingRules?.flattenWith === undefined ? [] : FOLDER_MODES;
}

/**
 * `ferry-folders` (or a transfer's `folders`; both, only if they agree): absent means the
 * destination's own way, which for a record without folders is `flatten`. A mode other than
 * `flatten` is refused for a destination that keeps folders: there it would only hide them.
 */
export function parseFolderMode(header: string | string[] | undefined, field: string | undefined, target: Target): FolderMode | undefined {
  const fromHeader = (Array.isArray(header) ? header[0] : header)?.trim().toLowerCase() || undefined;
  const given = [fromHeader, field?.trim().toLowerCase()].filter((mode): mode is string => mode !== undefined);
  if (given.length === 0) return undefined;
  const unknown = given.find((mode) => !(FOLDER_MODES as readonly string[]).includes(mode));
  if (unknown !== undefined) {
    throw badRequest(`Send ${FOLDERS_HEADER} as 'flatten' (folder paths joined into file names), 'zip-per-folder' (each folder stored as one ZIP) or 'bag' (everything in one BagIt ZIP), not '${unknown.slice(0, 40)}'.`);
  }
  if (given.length === 2 && given[0] !== given[1]) throw badRequest(`The header ${FOLDERS_HEADER} says '${given[0]}' but the field folders says '${given[1]}'; send one of them.`);
  const mode = given[0] as FolderMode;
  if (mode !== 'flatten' && folderModesOf(target).length === 0) {
    throw badRequest(`${target.info.readable_name} keeps folders as they are, so ${FOLDERS_HEADER} '${mode}' does not apply; leave it out.`);
  }
  return mode;
}

/** The destination folder must exist and be a folder, checked before any byte is spooled. */
export async function requireContainer(target: Target, ctx: TargetContext, id: string): Promise<void> {
  const info = await target.detail(ctx, id);
  if (info.kind !== 'container') {
    throw badRequest(`'${info.title}' is a file, not a folder; upload into a folder, or POST to /resources/ for a new top-level resource.`);
  }
}

/**
 * The source resource must exist: a 404 before the 202, not a failed job. Looked up with
 * `read` (which describes it, opening nothing) rather than `detail`, which may hash a whole
 * file first (the local target does: seconds for a large file, while the click waits).
 */
export async function requireSource(source: Target, ctx: TargetContext, id: string): Promise<void> {
  const read = await source.read(ctx, id);
  await read.entries[Symbol.asyncIterator]().return?.();
}

/** The resources a transfer names: exactly one of the two fields, a selection only into a folder. */
export function sourceIdsOf(body: TransferRequest, containerId: string | null): string[] {
  const one = body.source_resource_id;
  const many = body.source_resource_ids;
  if ((one === undefined) === (many === undefined)) {
    throw badRequest('Name the source as source_resource_id (one resource) or source_resource_ids (a selection), not both or neither.');
  }
  if (one !== undefined) return [one];
  const ids = [...new Set(many)];
  if (ids.length > 1 && containerId === null) {
    throw badRequest('A selection of several resources can only be copied into a folder; at the top level each becomes a resource of its own, so send one transfer for each.');
  }
  return ids;
}

const headerSchema = {
  type: 'object',
  properties: {
    // checked in the handler, to answer with its own code (invalid_duplicate_action)
    'duplicate-file-action': {
      type: 'string',
      description:
        'required: ignore (keep an existing file) | update (replace it when the bytes differ) | newer (replace it when the new one was modified later) | ' +
        'rename (keep both: the new one is written as `name (2).ext`, the first free name)',
    },
    [FOLDERS_HEADER]: {
      type: 'string',
      description:
        'optional, for a destination that keeps no folders (Zenodo, figshare, InvenioRDM): flatten (default: raw/a.csv stored as raw__a.csv) | ' +
        'zip-per-folder (each first-level folder stored as <folder>.zip) | bag (the whole write as one BagIt ZIP <title>.zip). ' +
        `Recorded in ${PROVENANCE_FILE}, so reading the record back rebuilds the folders (docs/api.md "Folder modes").`,
    },
    [PROVENANCE_HEADER]: {
      type: 'string',
      description: `optional: on (default) | off. On, the job writes or extends ${PROVENANCE_FILE} at the top of what it wrote (docs/provenance.md).`,
    },
    'service-destination-token': tokenHeader('destination'),
    'service-source-token': { ...tokenHeader('source'), description: 'transfer only: the source target’s token' },
  },
};

const bodySchema = {
  content: {
    'multipart/form-data': {
      schema: {
        // null: the multipart body is read by the handler, not parsed ahead of validation
        type: ['object', 'null'],
        description: `An upload: the ZIP (plain, or a zipped BagIt bag) in the field '${FILE_FIELD}'.`,
        properties: {
          [FILE_FIELD]: { type: 'string', format: 'binary' },
          [CHOICES_FIELD]: {
            type: 'string',
            description:
              'optional, JSON: per file, by its path in the ZIP (in a bag: below data/; as POST …/conflicts/ lists it), the action for that file ' +
              'instead of duplicate-file-action, as a transfer’s duplicate_choices. At most 64 KiB: send the most common choice as the header.',
          },
        },
      },
    },
    'application/json': {
      schema: {
        type: 'object',
        description:
          "A transfer (extension): another target's resource, copied in without a ZIP. `source_resource_ids` " +
          '(instead of `source_resource_id`) names a selection: all of it becomes one job, into a folder.',
        required: ['source_target_name'],
        additionalProperties: false,
        properties: {
          source_target_name: { type: 'string', minLength: 1 },
          source_resource_id: { type: 'string', minLength: 1 },
          source_resource_ids: {
            type: 'array',
            minItems: 1,
            maxItems: MAX_RESOURCES_PER_REQUEST,
            items: { type: 'string', minLength: 1 },
          },
          duplicate_choices: {
            type: 'object',
            description:
              'Per file, by its path as the source names it (as POST …/conflicts/ lists them): the action for that file instead of duplicate-file-action.',
            maxProperties: MAX_RESOURCES_PER_REQUEST,
            additionalProperties: { type: 'string', enum: [...DUPLICATE_FILE_ACTIONS] },
          },
          folders: { type: 'string', description: `the same as the header ${FOLDERS_HEADER}` },
          metadata: {
            ...ref('DescriptiveMetadata'),
            description:
              'A new top-level resource only: its descriptive metadata as reviewed (GET …/resources/<id>/metadata/, edited), ' +
              "used instead of the source's. What the destination cannot hold is named in the job's report.notes.",
          },
        },
      },
    },
  },
};

const responses = {
  202: { ...ref('Acknowledgement'), description: 'accepted; follow Location (/api_v1/jobs/<ticket>/) for the job' },
  ...errorResponses(400, 401, 403, 404, 405, 413, 415, 429, 502, 503),
};

export function registerUploadRoutes(app: FastifyInstance, context: ServerContext): void {
  const post = (request: FastifyRequest<{ Params: { target: string } }>, reply: FastifyReply, containerId: string | null) =>
    acceptPost(context, request, reply, containerId);

  app.post<{ Params: { target: string } }>(
    '/api_v1/targets/:target/resources/',
    {
      schema: {
        summary: 'Upload or transfer into a new top-level resource (4.6)',
        description:
          'The ZIP holds exactly one top-level folder (in a bag: under data/); it becomes the new resource. A ro-crate-metadata.json or CITATION.cff ' +
          "in that folder (or at the top of a bag's data/, or beside its bagit.txt) gives the new resource its descriptive metadata where the destination " +
          "keeps it (Target keeps_metadata); report.notes name what was not carried.",
        tags: ['uploads'],
        params: { type: 'object', required: ['target'], properties: { target: targetParam } },
        headers: headerSchema,
        body: bodySchema,
        response: responses,
      },
    },
    (request, reply) => post(request, reply, null),
  );

  app.post<{ Params: { target: string; resource: string } }>(
    '/api_v1/targets/:target/resources/:resource/',
    {
      schema: {
        summary: 'Upload or transfer into a folder (4.5)',
        tags: ['uploads'],
        params: { type: 'object', required: ['target', 'resource'], properties: { target: targetParam, resource: resourceParam } },
        headers: headerSchema,
        body: bodySchema,
        response: responses,
      },
    },
    (request, reply) => post(request, reply, resourceFromPath(request).id),
  );
}

async function acceptPost(
  { core }: ServerContext,
  request: FastifyRequest<{ Params: { target: string } }>,
  reply: FastifyReply,
  containerId: string | null,
): Promise<FastifyReply> {
  const target = core.targets.get(request.params.target);
  requireAction(target, 'resource_upload');
  const duplicateAction = parseDuplicateAction(request.headers['duplicate-file-action']);
  const provenance = parseProvenanceHeader(request.headers[PROVENANCE_HEADER]);
  const field = request.isMultipart() ? undefined : (request.body as TransferRequest | undefined)?.folders;
  const folders = parseFolderMode(request.headers[FOLDERS_HEADER], field, target);
  const signal = clientGone(request, reply);

  let job: Job;
  if (request.isMultipart()) {
    const destination = await resolveTargetToken(core, target, request, 'destination');
    if (containerId !== null) await requireContainer(target, { token: destination, signal }, containerId);
    let spoolPath: string;
    let duplicateChoices: Record<string, DuplicateFileAction> | undefined;
    try {
      spoolPath = await spoolUpload(request, core.config.dataDir, core.config.limits.maxUploadBytes, (name, value) => {
        if (name === CHOICES_FIELD) duplicateChoices = parseDuplicateChoices(value);
      });
    } catch (error) {
      // the rest of a refused body is not read (Node would drain it to reuse the socket)
      if (!request.raw.complete) reply.header('connection', 'close');
      throw error;
    }
    try {
      job = await core.jobs.submit({
        kind: 'upload',
        target: target.info.name,
        resource_id: containerId,
        params: { spoolPath, containerId, duplicateAction, ...(duplicateChoices ? { duplicateChoices } : {}), provenance, ...(folders ? { folders } : {}) },
        tokens: { destination },
        ownedFiles: [spoolPath],
      });
    } catch (error) {
      await rm(spoolPath, { force: true });
      throw error;
    }
  } else if (request.mediaType === 'application/json') {
    const body = request.body as TransferRequest;
    const ids = sourceIdsOf(body, containerId);
    if (body.metadata && containerId !== null) {
      throw badRequest('metadata describes a new top-level resource; a transfer into a folder keeps the folder\'s own. Leave metadata out, or transfer to the top level.');
    }
    const source = core.targets.get(body.source_target_name);
    requireAction(source, 'resource_download');
    const sourceToken = await resolveTargetToken(core, source, request, 'source');
    const destination = await resolveTargetToken(core, target, request, 'destination');
    // one resource is looked up before the job starts; a selection's members are read by the job
    if (ids.length === 1) await requireSource(source, { token: sourceToken, signal }, ids[0]!);
    if (containerId !== null) await requireContainer(target, { token: destination, signal }, containerId);
    job = await core.jobs.submit({
      kind: 'transfer',
      target: target.info.name,
      resource_id: containerId,
      source: { target: source.info.name, resource_id: ids[0]! },
      params: {
        source: { target: source.info.name, resourceId: ids[0]!, ...(ids.length > 1 ? { resourceIds: ids } : {}) },
        containerId,
        duplicateAction,
        ...(body.duplicate_choices ? { duplicateChoices: body.duplicate_choices } : {}),
        provenance,
        ...(folders ? { folders } : {}),
        ...(body.metadata ? { metadata: reviewedMetadata(body.metadata) } : {}),
      },
      tokens: { source: sourceToken, destination },
    });
  } else {
    throw new FerryError(
      415,
      'unsupported_media_type',
      `Send an upload as multipart/form-data with the ZIP in '${FILE_FIELD}', or a transfer as application/json.`,
    );
  }

  const acknowledgement: Acknowledgement = { ticket_number: job.ticket_number, message: ACKNOWLEDGEMENT_MESSAGE };
  return reply.code(202).header('location', jobPath(job.ticket_number)).send(acknowledgement);
}
