import { compact, type DescriptiveMetadata } from './model.js';
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
