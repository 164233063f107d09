// File operations over any target (docs/api.md "File operations"): the checks every target
// gets the same way (the operation is offered, the name is allowed), the trash lent to
// targets on this machine, and what undoes each operation. Targets do the work; the HTTP
// layer only turns these answers into URLs.
import type { FileOperation } from '../../../shared/api.js';
import { badRequest, notSupported } from '../errors.js';
import type { TargetRegistry } from '../registry.js';
import type { DeleteOutcome, MoveOutcome, MoveTo, ResourceNode, RestorableTrash, Target, TargetContext, Trash, TrashedItem } from '../target.js';
import { checkName } from './names.js';
import { requireOperation, supportedOperations } from './supported.js';

/**
 * What undoes an operation, or null when Ferry cannot: a restore from Ferry's trash, a move
 * back (to the old title and parent), or the delete of a folder just made.
 */
export type UndoPlan =
  | { kind: 'restore'; trashId: string }
  | { kind: 'move'; id: string; title: string; container: string | null }
  | { kind: 'delete'; id: string }
  | null;

/** A rename/move request as it arrives (unchecked). `container`: an id, "None" (top level) or absent. */
export interface MoveRequest {
  title?: unknown;
  container?: unknown;
  overwrite?: unknown;
}

export class FileOperations {
  constructor(
    private readonly targets: TargetRegistry,
    readonly trash: Trash,
  ) {}

  async delete(target: Target, ctx: TargetContext, id: string): Promise<{ outcome: DeleteOutcome; undo: UndoPlan }> {
    requireOperation(target, 'delete');
    const outcome = await target.deleteResource!(ctx, id, { trash: this.trash });
    return { outcome, undo: outcome.into.kind === 'ferry_trash' ? { kind: 'restore', trashId: outcome.into.id } : null };
  }

  async move(target: Target, ctx: TargetContext, id: string, request: MoveRequest): Promise<{ outcome: MoveOutcome; undo: UndoPlan }> {
    const to: MoveTo = { overwrite: request.overwrite === true };
    if (request.overwrite !== undefined && typeof request.overwrite !== 'boolean') throw badRequest('"overwrite" is true or false.');
    const needs: FileOperation[] = [];
    if (request.title !== undefined) {
      needs.push('rename');
      to.title = checkName(target, request.title);
    }
    if (request.container !== undefined) {
      if (typeof request.container !== 'string' || request.container === '') throw badRequest('"container" is a folder id, or "None" for the top level.');
      needs.push('move');
      to.container = request.container === 'None' ? null : request.container;
    }
    if (needs.length === 0) throw badRequest('Send "title" (a new name), "container" (a folder id, or "None"), or both.');
    for (const operation of needs) requireOperation(target, operation);
    const outcome = await target.moveResource!(ctx, id, to, { trash: this.trash });
    // a remote replace deleted something for good: moving back would not bring it back
    const lost = outcome.replaced?.into.kind === 'deleted';
    const { before, after } = outcome;
    return { outcome, undo: lost ? null : { kind: 'move', id: after.id, title: before.title, container: before.container } };
  }

  async createFolder(target: Target, ctx: TargetContext, containerId: string | null, title: unknown): Promise<{ node: ResourceNode; undo: UndoPlan }> {
    requireOperation(target, 'create_folder');
    const node = await target.createFolder!(ctx, containerId, checkName(target, title));
    return { node, undo: supportedOperations(target).delete ? { kind: 'delete', id: node.id } : null };
  }

  /** Ferry's trash, newest first (empty when the trash is the system's). */
  async trashed(): Promise<TrashedItem[]> {
    return isRestorable(this.trash) ? this.trash.list() : [];
  }

  /** Puts an item of Ferry's trash back through the target it came from. */
  async restore(trashId: string, ctxFor: (target: Target) => Promise<TargetContext>): Promise<{ item: TrashedItem; node: ResourceNode }> {
    const trash = this.trash;
    if (!isRestorable(trash)) throw notSupported("Deleted files went to the system's trash; put them back from there.");
    const item = await trash.find(trashId);
    const target = this.targets.get(item.origin.target);
    if (!target.restoreTrashed) throw notSupported(`${target.info.readable_name} cannot take back items from Ferry's trash.`);
    return { item, node: await target.restoreTrashed(await ctxFor(target), item, trash) };
  }
}

export function isRestorable(trash: Trash): trash is RestorableTrash {
  return typeof (trash as Partial<RestorableTrash>).takeOut === 'function';
}

