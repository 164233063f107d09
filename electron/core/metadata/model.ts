import type { DescriptiveMetadata } from '../target.js';

// The common model of descriptive metadata (DescriptiveMetadata, declared beside the Target
// interface it travels through) and the few rules every reader and writer shares. One module
// per service beside this one reads that service's metadata into the model and writes the
// model into what the service accepts; each writer names in a note every field it could not
// hold, so nothing is dropped silently.

export type { DescriptiveMetadata };
export type Creator = NonNullable<DescriptiveMetadata['creators']>[number];

/** The model's fields, in the order people read them. */
export const METADATA_FIELDS = ['title', 'description', 'creators', 'keywords', 'license', 'publication_date', 'related_identifiers', 'funding'] as const;
export type MetadataField = (typeof METADATA_FIELDS)[number];

/** What a writer makes of the model: the service's own fields, and a sentence for each thing it could not hold. */
export interface Written<T> {
  fields: T;
  notes: string[];
}

/** The fields `metadata` says something about, in METADATA_FIELDS order. */
export function knownFields(metadata: DescriptiveMetadata | null | undefined): MetadataField[] {
  if (!metadata) return [];
  return METADATA_FIELDS.filter((field) => {
    const value = metadata[field];
    return Array.isArray(value) ? value.length > 0 : typeof value === 'string' && value.trim() !== '';
  });
}

/** Drops empty strings and empty lists, so a field present always says something. */
export function compact(metadata: DescriptiveMetadata): DescriptiveMetadata {
  const kept: DescriptiveMetadata = {};
  for (const field of knownFields(metadata)) (kept as Record<string, unknown>)[field] = metadata[field];
  return kept;
}

/** A bare ORCID iD (0000-0002-1825-0097) from a bare one or its URL; undefined for anything else. */
export function bareOrcid(value: unknown): string | undefined {
  if (typeof value !== 'string') return undefined;
  const match = /^(?:https?:\/\/(?:www\.)?orcid\.org\/)?(\d{4}-\d{4}-\d{4}-\d{3}[\dX])\/?$/i.exec(value.trim());
  return match ? match[1]!.toUpperCase() : undefined;
}

/** A date as YYYY-MM-DD when `value` starts with one; undefined otherwise. */
export function isoDate(value: unknown): string | undefined {
  if (value instanceof Date && !Number.isNaN(value.getTime())) return value.toISOString().slice(0, 10);
  if (typeof value !== 'string') return undefined;
  const match = /^(\d{4}-\d{2}-\d{2})/.exec(value.trim());
  return match ? match[1] : undefined;
}

/** Services that keep descriptions as HTML: each paragraph of plain text one <p>. */
export function textToHtml(text: string): string {
  return text
    .split(/\n{2,}/)
    .map((paragraph) => `<p>${escapeHtml(paragraph).replace(/\n/g, '<br>')}</p>`)
    .join('');
}

/** The plain text of an HTML description: paragraphs and line breaks kept, tags dropped, entities read. */
export function htmlToText(html: string): string {
  return html
    .replace(/<br\s*\/?>/gi, '\n')
    .replace(/<\/(p|div|li|h[1-6])>\s*/gi, '\n\n')
    .replace(/<[^>]*>/g, '')
    .replace(/&(#\d+|#x[0-9a-f]+|amp|lt|gt|quot|apos|nbsp|#39);/gi, (_, name: string) => {
      const lower = name.toLowerCase();
      if (lower.startsWith('#x')) return String.fromCodePoint(parseInt(lower.slice(2), 16));
      if (lower.startsWith('#')) return String.fromCodePoint(Number(lower.slice(1)));
      return ({ amp: '&', lt: '<', gt: '>', quot: '"', apos: "'", nbsp: ' ' } as Record<string, string>)[lower]!;
    })
    .replace(/\n{3,}/g, '\n\n')
    .trim();
}

export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);
}

/** "Ada Lovelace" from a family and a given name, either of which may be missing. */
export function fullName(given: unknown, family: unknown): string {
  return [given, family].filter((part): part is string => typeof part === 'string' && part.trim() !== '').map((part) => part.trim()).join(' ');
}

/** The funding entries as one phrase for a note: "Wellcome Trust 204841; NSF". */
export function fundingPhrase(funding: NonNullable<DescriptiveMetadata['funding']>): string {
  return funding.map((f) => [f.funder, f.award].filter(Boolean).join(' ')).join('; ');
}

/** Metadata a person reviewed (a request's `metadata`, its shape already checked): ORCID iDs bare, empty fields dropped. */
export function reviewedMetadata(metadata: DescriptiveMetadata): DescriptiveMetadata {
  const creators = metadata.creators?.map((c) => ({ ...c, ...(c.orcid ? { orcid: bareOrcid(c.orcid) ?? c.orcid } : {}) }));
  return compact({ ...metadata, ...(creators ? { creators } : {}) });
}
