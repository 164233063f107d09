// JSON schemas of the contract (API.md). They document the routes in openapi.json and
// drive Fastify's serializer (fast-json-stringify) for the fixed shapes. `extra` stays
// free-form: each target puts its own fields there.
import type { FastifyInstance } from 'fastify';

const nullableString = { type: ['string', 'null'] } as const;

/** A check job's findings (shared/api.ts CheckReport; docs/api.md "Check"). */
const checkReportSchema = {
  type: 'object',
  description:
    'check jobs: paths as the source names them. A file is compared by size first, then by the strongest hash both ' +
    'targets give; with read_bytes, a file with no shared hash is hashed from its bytes, otherwise it counts as compared by size.',
  required: ['matched', 'missing', 'extra', 'different', 'not_comparable', 'compared_by', 'algorithms', 'read_bytes', 'read'],
  properties: {
    matched: { type: 'integer', description: 'files on both sides found equal' },
    missing: { type: 'array', items: { type: 'string' }, description: 'files and folders in the source only' },
    extra: { type: 'array', items: { type: 'string' }, description: 'files and folders in the destination only' },
    different: {
      type: 'array',
      items: {
        type: 'object',
        required: ['path', 'by', 'source', 'destination'],
        properties: {
          path: { type: 'string' },
          by: { type: 'string', enum: ['hash', 'size', 'kind'] },
          algorithm: { type: 'string', description: 'by hash: the algorithm both digests are of' },
          source: { type: ['string', 'integer'], description: 'the digest (lowercase hex), the size in bytes, or file|folder' },
          destination: { type: ['string', 'integer'] },
          read: { type: 'array', items: { type: 'string', enum: ['source', 'destination'] }, description: 'the sides whose digest Ferry computed from the bytes' },
        },
      },
    },
    not_comparable: {
      type: 'array',
      items: { type: 'object', required: ['path', 'reason'], properties: { path: { type: 'string' }, reason: { type: 'string' } } },
    },
    compared_by: {
      type: 'object',
      required: ['hash', 'size'],
      properties: { hash: { type: 'integer' }, size: { type: 'integer', description: 'by size only: no shared hash, bytes not read' } },
    },
    algorithms: { type: 'object', additionalProperties: { type: 'integer' }, description: 'files compared by each algorithm' },
    read_bytes: { type: 'boolean' },
    read: { type: 'object', required: ['files', 'bytes'], properties: { files: { type: 'integer' }, bytes: { type: 'integer' } } },
  },
} as const;

/** What one side knows of a file without reading it (FileFacts in shared/api.ts). */
const fileFacts = {
  type: 'object',
  required: ['size', 'date_modified', 'hashes'],
  properties: {
    size: { type: ['integer', 'null'] },
    date_modified: { ...nullableString, description: 'ISO 8601 UTC, six fraction digits, Z' },
    hashes: { type: 'object', additionalProperties: { type: 'string' }, description: 'what the side reports, lowercase hex by algorithm; may be empty' },
  },
} as const;

export const componentSchemas = [
  {
    $id: 'Error',
    type: 'object',
    description: 'Every error: a sentence a person can act on, and a stable snake_case code.',
    required: ['error', 'code'],
    properties: { error: { type: 'string' }, code: { type: 'string' } },
  },
  {
    $id: 'Target',
    type: 'object',
    required: ['name', 'readable_name', 'supported_actions', 'supported_hash_algorithms', 'detail'],
    properties: {
      name: { type: 'string' },
      readable_name: { type: 'string' },
      supported_actions: {
        type: 'object',
        required: ['resource_collection', 'resource_detail', 'resource_download', 'resource_upload'],
        properties: {
          resource_collection: { type: 'boolean' },
          resource_detail: { type: 'boolean' },
          resource_download: { type: 'boolean' },
          resource_upload: { type: 'boolean' },
        },
      },
      supported_hash_algorithms: { type: 'array', items: { type: 'string' } },
      detail: { type: 'string', description: '{base}/api_v1/target/<name>/' },
      supported_operations: {
        type: 'object',
        description: 'extension: the file operations the target offers (docs/api.md "File operations")',
        required: ['delete', 'rename', 'move', 'create_folder'],
        properties: {
          delete: { type: 'boolean' },
          rename: { type: 'boolean' },
          move: { type: 'boolean' },
          create_folder: { type: 'boolean' },
        },
      },
      capabilities: {
        type: 'object',
        description: 'extension: optional features beyond the four actions',
        required: ['search', 'folder_modes'],
        properties: {
          search: { type: 'boolean', description: 'GET resources/?q= searches; false: 405' },
          folder_modes: {
            type: 'array',
            items: { type: 'string', enum: ['flatten', 'zip-per-folder', 'bag'] },
            description:
              'the values of the header ferry-folders (a transfer’s folders) a write here chooses among, the first the default: ' +
              'all three where a record keeps no folders; empty where folders are kept as they are (docs/api.md "Folder modes")',
          },
        },
      },
      keeps_metadata: {
        type: 'boolean',
        description:
          'extension: a transfer to a new top-level resource here keeps descriptive metadata (the source\'s, or the reviewed copy in the ' +
          "transfer's `metadata`); false: it is not carried, and the job says so in its notes",
      },
    },
  },
  {
    $id: 'ResourceSummary',
    type: 'object',
    required: ['kind', 'kind_name', 'id', 'container', 'title', 'detail'],
    properties: {
      kind: { type: 'string', enum: ['container', 'item'] },
      kind_name: { type: 'string', enum: ['folder', 'file'] },
      id: { type: 'string' },
      container: { type: 'string', description: 'the parent id, or "None" at the top level' },
      title: { type: 'string' },
      detail: { type: 'string', description: '{base}/api_v1/targets/<t>/resources/<id>' },
      size: { type: ['integer', 'null'], description: 'only with `fields=size,date_modified`: bytes; null for a folder or when unknown' },
      date_modified: { type: ['string', 'null'], description: 'only with `fields=size,date_modified`: contract timestamp, or null' },
    },
  },
  {
    $id: 'ResourceDetail',
    type: 'object',
    required: ['kind', 'kind_name', 'id', 'title', 'date_created', 'date_modified', 'hashes', 'extra', 'download_url'],
    properties: {
      kind: { type: 'string', enum: ['container', 'item'] },
      kind_name: { type: 'string', enum: ['folder', 'file'] },
      id: { type: 'string' },
      title: { type: 'string' },
      date_created: { ...nullableString, description: 'ISO 8601 UTC, six fraction digits, Z' },
      date_modified: { ...nullableString, description: 'ISO 8601 UTC, six fraction digits, Z' },
      hashes: { type: 'object', additionalProperties: { type: 'string' } },
      extra: { type: 'object', additionalProperties: true },
      download_url: { type: 'string' },
    },
  },
  {
    $id: 'DescriptiveMetadata',
    type: 'object',
    description:
      "Descriptive metadata in Ferry's one model (docs/provenance.md): a field left out is not known. What a destination " +
      "cannot hold of it is named in the job's report.notes.",
    additionalProperties: false,
    properties: {
      title: { type: 'string', maxLength: 1000 },
      description: { type: 'string', maxLength: 100_000, description: 'plain text; paragraphs separated by a blank line' },
      creators: {
        type: 'array',
        maxItems: 1000,
        items: {
          type: 'object',
          required: ['name'],
          additionalProperties: false,
          properties: {
            name: { type: 'string', minLength: 1, maxLength: 500 },
            orcid: { type: 'string', pattern: '^(https?://(www\\.)?orcid\\.org/)?[0-9]{4}-[0-9]{4}-[0-9]{4}-[0-9]{3}[0-9X]$', description: 'an ORCID iD, bare or as its URL' },
            affiliation: { type: 'string', maxLength: 500 },
          },
        },
      },
      keywords: { type: 'array', maxItems: 1000, items: { type: 'string', minLength: 1, maxLength: 500 } },
      license: { type: 'string', maxLength: 500, description: 'an SPDX identifier (CC-BY-4.0) where known, else the licence\'s name' },
      publication_date: { type: 'string', pattern: '^[0-9]{4}-[0-9]{2}-[0-9]{2}$' },
      related_identifiers: {
        type: 'array',
        maxItems: 1000,
        items: {
          type: 'object',
          required: ['identifier', 'relation'],
          additionalProperties: false,
          properties: { identifier: { type: 'string', minLength: 1, maxLength: 2000 }, relation: { type: 'string', minLength: 1, maxLength: 100, description: "DataCite's relation type, e.g. isSupplementTo" } },
        },
      },
      funding: {
        type: 'array',
        maxItems: 1000,
        items: {
          type: 'object',
          required: ['funder'],
          additionalProperties: false,
          properties: { funder: { type: 'string', minLength: 1, maxLength: 500 }, award: { type: 'string', maxLength: 500 } },
        },
      },
    },
  },
  {
    $id: 'Acknowledgement',
    type: 'object',
    required: ['ticket_number', 'message'],
    properties: { ticket_number: { type: 'string' }, message: { type: 'string' } },
  },
  {
    $id: 'Job',
    type: 'object',
    // open: a job kind may add fields, and dropping them silently would hide progress
    additionalProperties: true,
    required: ['ticket_number', 'kind', 'status', 'target', 'resource_id', 'created', 'started', 'finished', 'progress', 'report', 'error'],
    properties: {
      ticket_number: { type: 'string' },
      kind: { type: 'string', enum: ['upload', 'transfer', 'verify', 'download', 'check'] },
      status: {
        type: 'string',
        enum: ['queued', 'running', 'paused', 'succeeded', 'completed_with_errors', 'failed', 'cancelled'],
        description:
          'queued: waiting its turn (GET /api_v1/queue/ has the order); paused: held by the user, continues from where it ' +
          'stopped when resumed; succeeded: every file arrived and every available check passed; completed_with_errors: some files failed ' +
          '(report.failed_files), the rest arrived and checked; failed: nothing arrived, or the job stopped (error says why); ' +
          'cancelled: stopped on request, incomplete. A finished job\'s report says what changed.',
      },
      target: { type: 'string' },
      resource_id: nullableString,
      created: { type: 'string' },
      started: nullableString,
      finished: nullableString,
      progress: {
        type: 'object',
        required: ['files_done', 'files_total', 'bytes_done', 'bytes_total'],
        properties: {
          files_done: { type: 'integer' },
          files_total: { type: ['integer', 'null'] },
          bytes_done: { type: 'integer' },
          bytes_total: { type: ['integer', 'null'] },
          note: { type: ['string', 'null'], description: 'while the job waits to retry a request: why and until when, in words' },
        },
      },
      report: {
        type: ['object', 'null'],
        additionalProperties: true,
        properties: {
          resources_created: { type: 'array', items: { type: 'string' } },
          resources_updated: { type: 'array', items: { type: 'string' } },
          resources_ignored: { type: 'array', items: { type: 'string' } },
          written_checks: {
            type: 'array',
            description: "each file written, checked against the destination's own record of it after the write",
            items: {
              type: 'object',
              required: ['path', 'result', 'detail'],
              properties: { path: { type: 'string' }, result: { type: 'string', enum: ['verified', 'not_verifiable', 'failed'] }, detail: { type: 'string' } },
            },
          },
          failed_fixity: {
            type: 'array',
            items: {
              type: 'object',
              properties: { path: { type: 'string' }, algorithm: { type: 'string' }, expected: { type: 'string' }, actual: { type: 'string' } },
            },
          },
          file_errors: {
            type: 'array',
            items: { type: 'object', properties: { path: { type: 'string' }, error: { type: 'string' } } },
          },
          failed_files: {
            type: 'array',
            description: 'every file that did not arrive or did not pass a check, once per file',
            items: {
              type: 'object',
              required: ['path', 'stage', 'error'],
              properties: {
                path: { type: 'string' },
                stage: { type: 'string', enum: ['read', 'write', 'fixity', 'verify'] },
                error: { type: 'string' },
                algorithm: { type: 'string' },
                expected: { type: 'string' },
                actual: { type: 'string' },
              },
            },
          },
          unconfirmed: {
            type: 'array',
            description: 'a job that stopped early: files handed to the destination whose writing was not confirmed',
            items: { type: 'string' },
          },
          verified: { type: 'array', items: { type: 'string' } },
          unverified: { type: 'array', items: { type: 'string' } },
          already_done: {
            type: 'array',
            description: 'a resumed job: files an earlier run completed with these same source bytes, not sent again',
            items: { type: 'string' },
          },
          check: checkReportSchema,
          new_resource: {
            type: ['object', 'null'],
            properties: { id: { type: 'string' }, title: { type: 'string' } },
          },
        },
      },
      error: nullableString,
      source: {
        type: ['object', 'null'],
        properties: { target: { type: 'string' }, resource_id: { type: 'string' } },
      },
      retry_of: { ...nullableString, description: 'a job made by POST /api_v1/jobs/<ticket>/retry/: the ticket it retries' },
      resumed: {
        type: ['object', 'null'],
        description:
          'a job going on where an earlier run stopped (Ferry stopped or crashed while it ran, or POST /api_v1/jobs/<ticket>/resume/): ' +
          'the files that run completed, not sent again, and the ticket resumed (from; null: this job, after a restart)',
        required: ['files_already_done', 'from'],
        properties: { files_already_done: { type: 'integer' }, from: nullableString },
      },
    },
  },
  {
    $id: 'QueueState',
    type: 'object',
    additionalProperties: false,
    required: ['settings', 'waiting'],
    properties: {
      settings: {
        type: 'object',
        additionalProperties: false,
        required: ['concurrency', 'per_target', 'bandwidth_limit'],
        properties: {
          concurrency: { type: 'integer', minimum: 1, description: 'jobs running at once' },
          per_target: {
            type: 'object',
            additionalProperties: { type: 'integer', minimum: 1 },
            description: 'at most this many running jobs may read or write the target',
          },
          bandwidth_limit: { type: ['integer', 'null'], description: 'bytes a second all running jobs read together; null: no limit' },
        },
      },
      waiting: { type: 'array', items: { type: 'string' }, description: 'tickets of the queued jobs, in the order they will run' },
    },
  },
  {
    $id: 'ConflictsReport',
    type: 'object',
    description: 'Which planned files the destination already holds, both sides side by side (docs/api.md "Duplicate files").',
    required: ['planned_files', 'conflicts'],
    properties: {
      planned_files: { type: 'integer', description: 'files the transfer or upload would write' },
      conflicts: {
        type: 'array',
        items: {
          type: 'object',
          required: ['path', 'destination_path', 'source', 'destination'],
          properties: {
            path: { type: 'string', description: 'as the source names it: the key of duplicate_choices' },
            destination_path: { type: 'string', description: 'where it would be written, relative to the destination folder' },
            source: fileFacts,
            destination: { anyOf: [{ ...fileFacts, required: [...fileFacts.required, 'id'], properties: { ...fileFacts.properties, id: { type: 'string' } } }, { type: 'null' }], description: 'null: a folder has that name' },
          },
        },
      },
    },
  },
] as const;

export function addComponentSchemas(app: FastifyInstance): void {
  for (const schema of componentSchemas) app.addSchema(schema);
}

export const ref = (id: (typeof componentSchemas)[number]['$id']) => ({ $ref: `${id}#` });

/** The error responses a route can give, all in the Error shape. */
export function errorResponses(...statuses: number[]): Record<number, { $ref: string; description: string }> {
  const descriptions: Record<number, string> = {
    400: 'malformed request',
    401: 'missing or invalid token',
    403: 'no access, or refused by the security gate',
    404: 'unknown target, resource or ticket',
    405: 'the target does not support this action',
    409: 'conflict (e.g. the job already finished)',
    413: 'over a size limit',
    415: 'wrong content type',
    428: 'a confirmation header is missing (ferry-confirm)',
    429: 'rate limited by the remote (Retry-After when known)',
    502: 'the remote failed',
    503: 'the remote is unavailable (Retry-After when known)',
  };
  return Object.fromEntries(statuses.map((status) => [status, { ...ref('Error'), description: descriptions[status] ?? 'error' }]));
}

export const tokenHeader = (_role: 'source' | 'destination') => ({
  type: 'string',
  description:
    `The target's token; for local targets Ferry's access key. May be omitted when ` +
    '`Authorization: Bearer <access key>` is sent and a token for the target is stored.',
});

export const targetParam = { type: 'string', description: "a target's name (GET /api_v1/targets/)" } as const;
export const resourceParam = {
  type: 'string',
  description: 'a resource id, percent-encoded in one path segment; with `.json` or `.zip` appended for 4.3/4.4',
} as const;
