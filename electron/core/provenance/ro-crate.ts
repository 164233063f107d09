import type { ProvenanceFile, ProvenanceResource } from './format.js';

// `ro-crate-metadata.json` for a downloaded bag: RO-Crate 1.2 with the crate's root at the
// bag's top ("adding BagIt to an RO-Crate"), so the metadata file is a tag file covered by
// the tag manifests and every data entity's @id is its path from the bag's top ("data/…").
// Only what is known is stated: a licence or description the source did not give is left
// out, never guessed (the spec wants a licence on the root; a source without one makes a
// crate without one, and a checker says so).

export const ROCRATE_FILE = 'ro-crate-metadata.json';
export const ROCRATE_CONFORMS_TO = 'https://w3id.org/ro/crate/1.2';
export const ROCRATE_CONTEXT = 'https://w3id.org/ro/crate/1.2/context';

export interface CrateInput {
  title: string;
  source: ProvenanceResource;
  describe?: { identifier?: string; description?: string; license?: string };
  /** the download time: the crate's datePublished (when this package was made) */
  published: Date;
  /** payload files, paths relative to data/ */
  files: readonly ProvenanceFile[];
  /** payload folders, paths relative to data/ */
  folders: readonly string[];
}

type Node = Record<string, unknown> & { '@id': string };

export function roCrateMetadata(input: CrateInput): Buffer {
  const folderIds = input.folders.map((folder) => `data/${folder}/`);
  const fileIds = input.files.map((file) => `data/${file.path}`);
  const root: Node = {
    '@id': './',
    '@type': 'Dataset',
    name: input.title,
    description: input.describe?.description || `${input.title}, downloaded by Ferry from ${input.source.target} (resource ${input.source.resource_id ?? 'unknown'}).`,
    datePublished: input.published.toISOString(),
    hasPart: [...folderIds, ...fileIds].map((id) => ({ '@id': id })),
  };
  if (input.describe?.license) root.license = { '@id': input.describe.license };
  if (input.source.identifier) root.identifier = input.source.identifier;
  const graph: Node[] = [
    { '@id': ROCRATE_FILE, '@type': 'CreativeWork', conformsTo: { '@id': ROCRATE_CONFORMS_TO }, about: { '@id': './' } },
    root,
    ...folderIds.map((id): Node => ({ '@id': id, '@type': 'Dataset', name: id.slice('data/'.length, -1).split('/').pop() })),
    ...input.files.map((file): Node => {
      const node: Node = { '@id': `data/${file.path}`, '@type': 'File', name: file.path.split('/').pop() };
      if (file.size !== null) node.contentSize = String(file.size);
      // schema.org's sha256 (in the RO-Crate 1.2 context); md5 stays in the bag's manifests
      if (file.computed_hashes.sha256) node.sha256 = file.computed_hashes.sha256;
      return node;
    }),
  ];
  return Buffer.from(`${JSON.stringify({ '@context': ROCRATE_CONTEXT, '@graph': graph }, null, 2)}\n`, 'utf8');
}
