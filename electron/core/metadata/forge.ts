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
  notes.push(...unheldByForge({ service: 'GitLab', thing: 'project', members: 'members' }, source, source.related_identifiers ?? []));
  return { fields, notes };
}

/**
 * What a new GitHub repository takes of the model: `description` and `homepage` on
 * `POST /user/repos`, then `topics` through `PUT /repos/{owner}/{repo}/topics`.
 */
export interface GithubRepositoryFields {
  description?: string;
  homepage?: string;
  topics?: string[];
}

/**
 * GitHub's limits on a repository's description: 350 characters and no control characters,
 * so no line breaks (its API answers 422 "description cannot be more than 350 characters",
 * "description control characters are not allowed"; r-lib/gh#92, github/VisualStudio#1777).
 */
export const GITHUB_DESCRIPTION_MAX = 350;
/**
 * GitHub's rule for a topic: lowercase letters, numbers and hyphens, starting with a letter or
 * number, at most 50 characters; at most 20 topics (docs "Classifying your repository with
 * topics"; the API answers 422 otherwise). docs/targets/github.md cites the evidence.
 */
const GITHUB_TOPIC = /^[a-z0-9][a-z0-9-]{0,49}$/;
export const GITHUB_MAX_TOPICS = 20;

/**
 * The model as a new GitHub repository's fields. The description is joined into one line and
 * cut to GitHub's 350 characters (said in a note); a related identifier that is the work
 * itself at a web address (`isIdenticalTo`, http or https) becomes the homepage. Keywords
 * become topics where only case and spaces stand in the way ("Sea Level" → "sea-level", said
 * in a note); any other keyword, and any beyond GitHub's 20, is named in a note. Creators,
 * licence, the other related identifiers, funding and the publication date are named in notes,
 * as for GitLab.
 */
export function githubRepositoryFields(source: DescriptiveMetadata | undefined): Written<GithubRepositoryFields> {
  const fields: GithubRepositoryFields = {};
  const notes: string[] = [];
  if (!source) return { fields, notes };
  if (source.description) {
    const trimmed = source.description.trim();
    const oneLine = trimmed.replace(LINE_BREAKS, ' ');
    const characters = [...oneLine];
    fields.description = characters.slice(0, GITHUB_DESCRIPTION_MAX).join('');
    const joined = oneLine !== trimmed;
    const cut = characters.length > GITHUB_DESCRIPTION_MAX;
    if (joined || cut) {
      const what = [joined ? 'joined into one line' : null, cut ? `cut to ${GITHUB_DESCRIPTION_MAX} characters` : null].filter(Boolean).join(' and ');
      notes.push(`GitHub keeps a description of one line and at most ${GITHUB_DESCRIPTION_MAX} characters, so the source's was ${what}.`);
    }
  }
  const related = source.related_identifiers ?? [];
  const homepage = related.find((r) => r.relation === 'isIdenticalTo' && /^https?:\/\/\S+$/i.test(r.identifier));
  if (homepage) fields.homepage = homepage.identifier;
  if (source.keywords?.length) {
    const topics = githubTopics(source.keywords);
    if (topics.topics.length > 0) fields.topics = topics.topics;
    notes.push(...topics.notes);
  }
  const unheldRelated = related.filter((r) => r !== homepage);
  notes.push(...unheldByForge({ service: 'GitHub', thing: 'repository', members: 'collaborators' }, source, unheldRelated, homepage ? ' other than the one made its homepage' : ''));
  return { fields, notes };
}

/** A run of control characters (line breaks, tabs: GitHub refuses them in a description) and the spaces around it. */
// eslint-disable-next-line no-control-regex
const LINE_BREAKS = /\s*[\u0000-\u001f\u007f][\s\u0000-\u001f\u007f]*/g;

/** Keywords as GitHub topics: in GitHub's form where lower case and hyphens for spaces make it so, each once, at most 20; the rest named. */
function githubTopics(keywords: readonly string[]): { topics: string[]; notes: string[] } {
  const topics: string[] = [];
  const reformed: string[] = [];
  const refused: string[] = [];
  const overLimit: string[] = [];
  for (const keyword of keywords) {
    const topic = keyword.trim().toLowerCase().replace(/\s+/g, '-');
    if (!GITHUB_TOPIC.test(topic)) refused.push(keyword);
    else if (topics.includes(topic)) continue;
    else if (topics.length >= GITHUB_MAX_TOPICS) overLimit.push(keyword);
    else {
      topics.push(topic);
      if (topic !== keyword) reformed.push(`'${keyword}' → '${topic}'`);
    }
  }
  const notes: string[] = [];
  if (reformed.length > 0) notes.push(`GitHub topics are lower case with hyphens for spaces, so these keywords were written as: ${reformed.join(', ')}.`);
  if (refused.length > 0) notes.push(`GitHub topics hold only lowercase letters, numbers and hyphens (at most 50 characters), so the keywords ${quoted(refused)} were not added as topics.`);
  if (overLimit.length > 0) notes.push(`GitHub keeps at most ${GITHUB_MAX_TOPICS} topics, so the keywords ${quoted(overLimit)} were not added.`);
  return { topics, notes };
}

function quoted(values: readonly string[]): string {
  return values.map((value) => `'${value}'`).join(', ');
}

/**
 * What a new GitLab project or GitHub repository cannot hold, alike on both: its people are
 * the service's accounts, its licence is what a LICENSE file in it says, and it holds no
 * related identifiers (but `related`, those not carried otherwise), funding or publication date.
 */
function unheldByForge(forge: { service: string; thing: string; members: string }, source: DescriptiveMetadata, related: readonly unknown[], relatedBesides = ''): string[] {
  const { service, thing, members } = forge;
  const notes: string[] = [];
  if (source.creators?.length) notes.push(`${service} lists a ${thing}'s ${members} as ${service} accounts, so the creators (${source.creators.map((c) => c.name).join(', ')}) were not added; a CITATION.cff in the ${thing} can name them.`);
  if (source.license) notes.push(`${service} reads a ${thing}'s licence from a LICENSE file in it, so the licence '${source.license}' was not set; add that file.`);
  const unheld = [related.length ? `related identifiers${relatedBesides}` : null, source.funding?.length ? 'funding' : null, source.publication_date ? 'publication date' : null].filter(Boolean);
  if (unheld.length > 0) notes.push(`A ${service} ${thing} holds no ${unheld.join(', ')}; the source's were not carried.`);
  return notes;
}
