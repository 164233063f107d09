import { compact, type DescriptiveMetadata, type Written } from './model.js';
import { spdxOf } from './licenses.js';

// A GitHub or GitLab repository in the common model: what the service says of it
// (description, topics, licence as SPDX id: GitHub's `license.spdx_id`, GitLab's
// `license.key` with `?license=true`) under what its own CITATION.cff says, which is the
// authors' own description of the work and wins where it says something.

export interface RepositoryFacts {
  name: string;
  description: string | null;
  topics: string[];
  /** an SPDX id, GitLab's licence key, or null; GitHub's "NOASSERTION" means unknown */
  license: string | null;
}

export function repositoryMetadata(repo: RepositoryFacts, citation: DescriptiveMetadata | null): DescriptiveMetadata {
  const license = repo.license && repo.license !== 'NOASSERTION' ? spdxOf(repo.license) : undefined;
  const fromService: DescriptiveMetadata = {
    title: repo.name,
    ...(repo.description ? { description: repo.description } : {}),
    keywords: repo.topics,
    ...(license ? { license } : {}),
  };
  return compact({ ...fromService, ...(citation ?? {}) });
}

/** What a new GitLab project takes of the model when it is created (doc/api/projects.md "Create a project"). */
export interface GitlabProjectFields {
  description?: string;
  topics?: string[];
}

/** GitLab's limit on a project's description (app/models/project.rb: `validates :description, length: { maximum: 2000 }`). */
const GITLAB_DESCRIPTION_MAX = 2000;

/**
 * The model as a new GitLab project's `description` and `topics` (keywords). The rest is
 * named in notes, never guessed: a project's members are GitLab accounts, its licence is what
 * a LICENSE file in the repository says, and it holds no related identifiers or funding.
 */
export function gitlabProjectFields(source: DescriptiveMetadata | undefined): Written<GitlabProjectFields> {
  const fields: GitlabProjectFields = {};
  const notes: string[] = [];
  if (!source) return { fields, notes };
  if (source.description) {
    fields.description = source.description.slice(0, GITLAB_DESCRIPTION_MAX);
    if (source.description.length > GITLAB_DESCRIPTION_MAX) notes.push(`GitLab keeps ${GITLAB_DESCRIPTION_MAX} characters of a description; the rest of the source's was cut.`);
  }
  if (source.keywords?.length) fields.topics = [...source.keywords];
  if (source.creators?.length) notes.push(`GitLab lists a project's members as GitLab accounts, so the creators (${source.creators.map((c) => c.name).join(', ')}) were not added; a CITATION.cff in the project can name them.`);
  if (source.license) notes.push(`GitLab reads a project's licence from a LICENSE file in it, so the licence '${source.license}' was not set; add that file.`);
  const unheld = [source.related_identifiers?.length ? 'related identifiers' : null, source.funding?.length ? 'funding' : null, source.publication_date ? 'publication date' : null].filter(Boolean);
  if (unheld.length > 0) notes.push(`A GitLab project holds no ${unheld.join(', ')}; the source's were not carried.`);
  return { fields, notes };
}
