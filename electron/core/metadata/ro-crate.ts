import { bareOrcid, compact, isoDate, type Creator, type DescriptiveMetadata } from './model.js';
import { spdxOf } from './licenses.js';

// ro-crate-metadata.json (RO-Crate 1.1/1.2) in the common model. The root data entity is the
// one the metadata descriptor (`@id: ro-crate-metadata.json`) is `about`; from it: name,
// description, author (Person entities: name, `@id` an ORCID URL, affiliation an Organization
// or a text), keywords (a list or one comma-separated text), license (a URL or an entity
// with one, or text), datePublished, identifier, funder. References are followed within the
// crate's @graph; nothing is fetched.

export const RO_CRATE_METADATA = 'ro-crate-metadata.json';

type Node = Record<string, unknown>;

/** The crate's descriptive metadata; null when the text is not a crate Ferry can read. */
export function readRoCrate(text: string): DescriptiveMetadata | null {
  let crate: unknown;
  try {
    crate = JSON.parse(text);
  } catch {
    return null;
  }
  const graph = (crate as { '@graph'?: unknown })?.['@graph'];
  if (!Array.isArray(graph)) return null;
  const byId = new Map<string, Node>();
  for (const node of graph as Node[]) if (node && typeof node['@id'] === 'string') byId.set(node['@id'], node);
  const descriptor = byId.get(RO_CRATE_METADATA) ?? byId.get(`./${RO_CRATE_METADATA}`);
  const rootId = refOf(descriptor?.about);
  const root = rootId ? byId.get(rootId) : undefined;
  if (!root) return null;
  const resolve = (value: unknown): Node | string | null => {
    const id = refOf(value);
    if (id) return byId.get(id) ?? id;
    return typeof value === 'string' ? value : value && typeof value === 'object' ? (value as Node) : null;
  };

  const metadata: DescriptiveMetadata = {};
  const name = text_(root.name);
  if (name) metadata.title = name;
  const description = text_(root.description);
  if (description) metadata.description = description;
  metadata.creators = list(root.author ?? root.creator).map((value) => creatorOf(resolve(value), resolve)).filter((c): c is Creator => c !== null);
  const keywords = root.keywords;
  metadata.keywords = Array.isArray(keywords) ? keywords.map(String).map((k) => k.trim()).filter(Boolean) : typeof keywords === 'string' ? keywords.split(',').map((k) => k.trim()).filter(Boolean) : [];
  const license = resolve(list(root.license)[0]);
  const licenseText = typeof license === 'string' ? license : license ? (refOf(license) ?? text_(license.url) ?? text_(license.identifier) ?? text_(license.name)) : null;
  if (licenseText) metadata.license = spdxOf(licenseText);
  const published = isoDate(root.datePublished);
  if (published) metadata.publication_date = published;
  metadata.related_identifiers = list(root.identifier)
    .map((value) => {
      const node = resolve(value);
      return typeof node === 'string' ? node : node ? (text_(node.value) ?? text_(node.url) ?? refOf(node)) : null;
    })
    .filter((identifier): identifier is string => Boolean(identifier))
    .map((identifier) => ({ identifier, relation: 'isIdenticalTo' }));
  metadata.funding = list(root.funder)
    .map((value) => {
      const node = resolve(value);
      const funder = typeof node === 'string' ? node : node ? text_(node.name) : null;
      return funder ? { funder } : null;
    })
    .filter((f): f is { funder: string } => f !== null);
  return compact(metadata);
}

function creatorOf(node: Node | string | null, resolve: (value: unknown) => Node | string | null): Creator | null {
  if (typeof node === 'string') return node.startsWith('#') || /^https?:/.test(node) ? null : { name: node };
  if (!node) return null;
  const name = text_(node.name) ?? [text_(node.givenName), text_(node.familyName)].filter(Boolean).join(' ');
  if (!name) return null;
  const orcid = bareOrcid(node['@id']) ?? bareOrcid(node.identifier);
  const affiliationNode = resolve(list(node.affiliation)[0]);
  const affiliation = typeof affiliationNode === 'string' ? affiliationNode : affiliationNode ? text_(affiliationNode.name) : null;
  return { name, ...(orcid ? { orcid } : {}), ...(affiliation ? { affiliation } : {}) };
}

function refOf(value: unknown): string | null {
  return value && typeof value === 'object' && typeof (value as Node)['@id'] === 'string' ? ((value as Node)['@id'] as string) : null;
}

function list(value: unknown): unknown[] {
  return value === undefined || value === null ? [] : Array.isArray(value) ? value : [value];
}

function text_(value: unknown): string | null {
  return typeof value === 'string' && value.trim() ? value.trim() : null;
}
