// Communities as containers (docs/targets/invenio.md): the communities the user is a member of
// (invenio-communities `GET /api/user/communities`) follow the user's records at the top, and
// a community holds its published records, anyone's (rdm-records `community-records`,
// `GET /api/communities/{id}/records`). Drafts never show there: a record joins a community
// when a curator accepts it, which is the owner's request to make on the instance.
import { normalizeTimestamp } from '../../time.js';
import type { ResourceInfo, ResourceNode } from '../../target.js';
import type { InvenioApi, InvenioCommunity } from './api.js';
import { communityId } from './ids.js';

export function communityNode(community: InvenioCommunity): ResourceNode {
  return { kind: 'container', kind_name: 'folder', id: communityId(community.id), container: null, title: community.metadata?.title?.trim() || community.slug || `Community ${community.id}` };
}

export async function communityDetail(api: InvenioApi, id: string, provider: string, signal: AbortSignal): Promise<ResourceInfo> {
  const community = await api.community(id, signal);
  return {
    ...communityNode(community),
    date_created: normalizeTimestamp(community.created),
    date_modified: normalizeTimestamp(community.updated),
    hashes: {},
    extra: { provider, type: 'community', instance: api.account.url, community_id: community.id, slug: community.slug ?? null, html_url: community.links?.self_html ?? null },
  };
}
