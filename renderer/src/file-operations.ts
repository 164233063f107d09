// Delete, rename, move and new folder (docs/api.md "File operations"), each offered only where
// the target's `supported_operations` says so. Every answer carries the server's sentence and,
// when it can be undone, an `undo` request: the notice shows the sentence and an Undo button
// that sends that request as it is. A delete on a remote service is final, so it is asked
// first, naming what and where; on this machine it goes to a trash and Undo is the safety net.
import type { ResourceSummary, UndoRequest } from '../../shared/api.js';
import { messageOf } from './api/client.js';
import type { BaseServices } from './services.js';
import { containerOf, type PaneSide } from './stores/pane.js';
import { askConfirm, askText, setNotice } from './stores/ui.js';

/** The checks a name passes on every target (docs/api.md "Names"); null when it is fine. */
export function nameProblem(name: string): string | null {
  if (name === '.' || name === '..') return 'A name cannot be "." or "..".';
  if (/[/\\]/.test(name)) return 'A name cannot contain "/" or "\\".';
  // eslint-disable-next-line no-control-regex
  if (/[\u0000-\u001f\u007f]/.test(name)) return 'A name cannot contain control characters.';
  if (new TextEncoder().encode(name).length > 255) return 'A name can be at most 255 bytes long.';
  return null;
}

export const quoted = (items: readonly ResourceSummary[]) =>
  items.length === 1 ? `“${items[0]!.title}”` : `${items.length} items`;

export interface FileOperationsDeps {
  /** the selected rows of a pane, or the row under the cursor */
  selectedItems(side: PaneSide): ResourceSummary[];
  /** "OSF › Project › raw": where a pane is */
  describe(target: string, trail: readonly { title: string }[]): string;
}

export function createFileOperations(s: BaseServices, deps: FileOperationsDeps) {
  const pane = (side: PaneSide) => s.panes[side].getState();

  /** Both panes list again where they show `target` (ids of path-based targets change on a move). */
  async function relist(target: string): Promise<void> {
    s.details.invalidate(target);
    await Promise.all((['left', 'right'] as const).filter((side) => pane(side).target === target).map((side) => pane(side).refresh()));
  }

  /**
   * The notice after an operation: the server's sentences (and the failure that stopped it),
   * and Undo when every step that was done can be undone.
   */
  function report(side: PaneSide, target: string, messages: string[], undos: (UndoRequest | null)[], failure: string | null = null): void {
    const undoable = undos.length > 0 && undos.every((undo): undo is UndoRequest => undo !== null);
    setNotice(s.ui, side, {
      kind: failure ? 'error' : 'info',
      text: [...messages, ...(failure ? [failure] : [])].join(' '),
      ...(undoable ? { undo: () => void undo(side, target, [...undos].reverse()) } : {}),
    });
  }

  /** Sends undo requests in order (the last operation first) and says what came of it. */
  async function undo(side: PaneSide, target: string, requests: UndoRequest[]): Promise<void> {
    const done: string[] = [];
    try {
      for (const request of requests) {
        await s.api.undo(request);
        done.push(request.description);
      }
      setNotice(s.ui, side, { kind: 'info', text: `Undone. ${[...new Set(done)].join(' ')}` });
    } catch (error) {
      setNotice(s.ui, side, {
        kind: 'error',
        text: `${done.length ? `${done.length} of ${requests.length} steps were undone; then: ` : 'It could not be undone: '}${messageOf(error)}`,
      });
    }
    await relist(target);
  }

  async function deleteSelection(side: PaneSide): Promise<void> {
    const state = pane(side);
    const items = deps.selectedItems(side);
    const target = state.target;
    if (!target || items.length === 0) {
      setNotice(s.ui, side, { kind: 'info', text: 'Select what to delete first.' });
      return;
    }
    if (!s.session.offers(target, 'delete')) {
      setNotice(s.ui, side, { kind: 'error', text: `${s.session.readableName(target)} does not let Ferry delete files.` });
      return;
    }
    const where = deps.describe(target, state.trail);
    if (!s.session.isOnThisMachine(target)) {
      const folders = items.filter((item) => item.kind === 'container').length;
      const yes = await askConfirm(s.ui, {
        title: 'Delete from the service?',
        text:
          `${quoted(items)} will be deleted from ${where}` +
          `${folders ? `, with everything inside ${folders === 1 && items.length === 1 ? 'it' : 'the folders'}` : ''}. ` +
          'The service keeps no copy Ferry can restore: this cannot be undone.',
        confirm: 'Delete',
        danger: true,
      });
      if (!yes) return;
    }
    const messages: string[] = [];
    const undos: (UndoRequest | null)[] = [];
    let failure: string | null = null;
    for (const item of items) {
      try {
        const result = await s.api.deleteResource(target, item.id);
        messages.push(result.message);
        undos.push(result.undo);
      } catch (error) {
        failure = `“${item.title}” could not be deleted: ${messageOf(error)}`;
        break; // what is left stays as it is: nothing is deleted after a failure
      }
    }
    await relist(target);
    report(side, target, messages, undos, failure);
  }

  async function renameCursor(side: PaneSide): Promise<void> {
    const state = pane(side);
    const item = deps.selectedItems(side)[0];
    const target = state.target;
    if (!target || !item) {
      setNotice(s.ui, side, { kind: 'info', text: 'Select what to rename first.' });
      return;
    }
    if (!s.session.offers(target, 'rename')) {
      setNotice(s.ui, side, { kind: 'error', text: `${s.session.readableName(target)} does not let Ferry rename files.` });
      return;
    }
    const title = await askText(s.ui, {
      title: 'Rename',
      label: `New name for “${item.title}” in ${deps.describe(target, state.trail)}:`,
      initial: item.title,
      confirm: 'Rename',
    });
    if (!title || title === item.title) return;
    const problem = nameProblem(title);
    if (problem) {
      setNotice(s.ui, side, { kind: 'error', text: problem });
      return;
    }
    try {
      const result = await s.api.moveResource(target, item.id, { title });
      await relist(target);
      pane(side).select(result.resource.id, 'replace', []);
      report(side, target, [result.message], [result.undo]);
    } catch (error) {
      setNotice(s.ui, side, { kind: 'error', text: `“${item.title}” was not renamed: ${messageOf(error)}` });
    }
  }

  /** Moves the selection into the folder the other pane shows, when both show the same target. */
  async function moveAcross(from: PaneSide, to: PaneSide): Promise<void> {
    const source = pane(from);
    const dest = pane(to);
    const items = deps.selectedItems(from);
    const target = source.target;
    if (!target || items.length === 0) {
      setNotice(s.ui, from, { kind: 'info', text: 'Select what to move first.' });
      return;
    }
    if (dest.target !== target) {
      setNotice(s.ui, from, {
        kind: 'error',
        text: 'A move stays within one place: open a folder of the same place in the other pane, or use Transfer to copy across.',
      });
      return;
    }
    if (!s.session.offers(target, 'move')) {
      setNotice(s.ui, from, { kind: 'error', text: `${s.session.readableName(target)} does not let Ferry move files.` });
      return;
    }
    const container = containerOf(dest) ?? 'None';
    if (container === (containerOf(source) ?? 'None')) {
      setNotice(s.ui, from, { kind: 'info', text: 'Both panes show the same folder: there is nowhere to move to.' });
      return;
    }
    const messages: string[] = [];
    const undos: (UndoRequest | null)[] = [];
    let failure: string | null = null;
    for (const item of items) {
      try {
        const result = await s.api.moveResource(target, item.id, { container });
        messages.push(result.message);
        undos.push(result.undo);
      } catch (error) {
        failure = `“${item.title}” was not moved: ${messageOf(error)}`;
        break; // the rest stays where it is
      }
    }
    await relist(target);
    report(from, target, messages, undos, failure);
  }

  /**
   * A new folder where the pane is. Through the file operation where the target offers it
   * (answers at once, with Undo); otherwise an upload of one empty folder (a job).
   */
  async function createFolder(side: PaneSide): Promise<'done' | 'not-offered'> {
    const state = pane(side);
    const target = state.target;
    if (!target || !s.session.offers(target, 'create_folder')) return 'not-offered';
    const title = await askText(s.ui, {
      title: 'New folder',
      label: `Name of the new folder in ${deps.describe(target, state.trail)}:`,
      initial: 'New folder',
      confirm: 'Create',
    });
    if (!title) return 'done';
    const problem = nameProblem(title);
    if (problem) {
      setNotice(s.ui, side, { kind: 'error', text: problem });
      return 'done';
    }
    try {
      const result = await s.api.createFolder(target, containerOf(state), title);
      await relist(target);
      pane(side).select(result.resource.id, 'replace', []);
      report(side, target, [result.message], [result.undo]);
    } catch (error) {
      setNotice(s.ui, side, { kind: 'error', text: `The folder “${title}” was not created: ${messageOf(error)}` });
    }
    return 'done';
  }

  return { deleteSelection, renameCursor, moveAcross, createFolder, undo };
}

export type FileOperations = ReturnType<typeof createFileOperations>;
