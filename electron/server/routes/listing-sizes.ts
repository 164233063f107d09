// One listing level with every row's size and modification time, for sorting a folder by
// size or date on complete data (GET …/resources/?container=<id>&fields=size,date_modified).
// Only the Target interface: a file's size and mtime come from `read` (its one entry is
// described without opening its bytes, so nothing is hashed), a folder's date from `detail`
// (a container's detail has no hashes to compute). A look that fails leaves that row's
// values null rather than failing the level: the row then sorts last, as "unknown".
import type { ResourceSummary } from '../../../shared/api.js';
import type { ListScope, ResourceNode, Target, TargetContext } from '../../core/target.js';
import { describeStoredFile } from '../../core/file-facts.js';
import { toSummary } from './resources.js';

export const LISTED_FIELDS = 'size,date_modified';

/** How many rows are looked at at once: enough to hide a disk's or a remote's latency, few enough to be polite. */
const CONCURRENCY = 8;

interface Sized {
  size: number | null;
  date_modified: string | null;
}

export async function listWithSizes(target: Target, ctx: TargetContext, scope: ListScope, base: string): Promise<ResourceSummary[]> {
  const nodes: ResourceNode[] = [];
  for await (const node of target.list(ctx, scope)) nodes.push(node);
  const sized: Sized[] = new Array<Sized>(nodes.length);
  let next = 0;
  const worker = async () => {
    while (next < nodes.length) {
      const index = next++;
      sized[index] = await sizeOf(target, ctx, nodes[index]!);
    }
  };
  await Promise.all(Array.from({ length: Math.min(CONCURRENCY, nodes.length) }, worker));
  ctx.signal.throwIfAborted();
  return nodes.map((node, index) => ({ ...toSummary(node, base, target.info.name), ...sized[index]! }));
}

async function sizeOf(target: Target, ctx: TargetContext, node: ResourceNode): Promise<Sized> {
  if (ctx.signal.aborted) return { size: null, date_modified: null };
  try {
    if (node.kind === 'item' && target.info.supported_actions.resource_download) {
      const facts = await describeStoredFile(target, ctx, node.id);
      return { size: facts?.size ?? null, date_modified: facts?.date_modified ?? null };
    }
    const info = await target.detail(ctx, node.id);
    const size = info.extra.size;
    return { size: node.kind === 'item' && typeof size === 'number' ? size : null, date_modified: info.date_modified };
  } catch {
    return { size: null, date_modified: null };
  }
}
