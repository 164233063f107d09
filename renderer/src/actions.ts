// What the buttons, keys and drops do: they combine the stores with the API.
import { MAX_RESOURCES_PER_REQUEST, type FileConflict, type FolderMode, type ResourceSummary } from '../../shared/api.js';
import { ApiRequestError, downloadPath, messageOf } from './api/client.js';
import { streamSse } from './api/sse.js';
import type { BaseServices } from './services.js';
import { isFinished, retryLabel, type Submission } from './stores/jobs.js';
import { containerOf, type Crumb, type PaneSide } from './stores/pane.js';
import { formatBytes } from './format.js';
import { askFolderMode, askMetadataReview, askText, setNotice } from './stores/ui.js';
import { compacted, type DuplicateDecision } from './stores/duplicates.js';
import { describedOf, reviewOf, sameMetadata } from './metadata.js';
import { createFileOperations } from './file-operations.js';
import { folderSize, type FolderSize } from './folder-size.js';
import { describeFiles, hasSubfolders, planUploads, topLevelNames, type Picked } from './upload/collect.js';
import { newFolderPlan, zipBlob } from './upload/zip.js';
import type { DescriptiveMetadata, Job } from '../../shared/api.js';

export const otherSide = (side: PaneSide): PaneSide => (side === 'left' ? 'right' : 'left');

/** The offline library ("Downloaded ZIPs"), where "Keep offline" puts a copy of a download. */
export const LIBRARY_TARGET = 'offline';

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** Bytes of request body a group (of ids, of described files) may take: the server refuses JSON bodies over 1 MiB. */
const MAX_GROUP_BODY = 900 * 1024;

/** A selection cut into as few groups as fit one request each (almost always one). */
export function requestSizedGroups<T extends { id: string }>(items: readonly T[]): T[][] {
  return sizedGroups(items, (item) => JSON.stringify(item.id).length + 1);
}

/** Items cut into as few groups as fit one request body each, `costOf` the bytes one takes there. */
export function sizedGroups<T>(items: readonly T[], costOf: (item: T) => number): T[][] {
  const groups: T[][] = [];
  let current: T[] = [];
  let bytes = 0;
  for (const item of items) {
    const cost = costOf(item);
    if (current.length > 0 && (bytes + cost > MAX_GROUP_BODY || current.length >= MAX_RESOURCES_PER_REQUEST)) {
      groups.push(current);
      current = [];
      bytes = 0;
    }
    current.push(item);
    bytes += cost;
  }
  if (current.length > 0) groups.push(current);
  return groups;
}

/** A response's body, reporting bytes as they pass (at most every 100 ms) and the total when the server sent one. */
function counted(response: Response, report: (done: number, total: number | null) => void): ReadableStream<Uint8Array> {
  const length = Number(response.headers.get('content-length'));
  const total = Number.isFinite(length) && length > 0 ? length : null;
  let done = 0;
  let last = 0;
  return response.body!.pipeThrough(
    new TransformStream<Uint8Array, Uint8Array>({
      transform(chunk, controller) {
        done += chunk.byteLength;
        const now = Date.now();
        if (now - last >= 100) {
          last = now;
          report(done, total);
        }
        controller.enqueue(chunk);
      },
    }),
  );
}

export function createActions(s: BaseServices) {
  /** ZIP bodies of this run's uploads, so a failed upload can be sent again */
  const uploadBlobs = new Map<string, Blob>();
  let blobCounter = 0;
  /** the folder mode last chosen per destination target, for this session (in memory: a new session starts from the server's default) */
  const folderModes = new Map<string, FolderMode>();
  /** check jobs started here: their findings open by themselves when they end */
  const compareTickets = new Set<string>();

  const pane = (side: PaneSide) => s.panes[side].getState();

  function describe(target: string, trail: readonly Crumb[]): string {
    return [s.session.readableName(target), ...trail.map((c) => c.title)].join(' › ');
  }

  /** Whether the core can re-check this target's stored bytes (GET /app/session says). */
  function canVerify(target: string | null): boolean {
    if (!target) return false;
    return s.session.store.getState().session?.targets.find((t) => t.name === target)?.can_verify === true;
  }

  /** What Verify would check in this pane: the selected top-level archives, if it can verify at all. */
  function verifiableItems(side: PaneSide): ResourceSummary[] {
    const state = pane(side);
    if (!canVerify(state.target) || state.trail.length > 0) return [];
    return selectedItems(side);
  }

  function selectedItems(side: PaneSide): ResourceSummary[] {
    const state = pane(side);
    const chosen = state.selection.size > 0 ? state.selection : new Set(state.cursor ? [state.cursor] : []);
    return state.items.filter((item) => chosen.has(item.id));
  }

  /**
   * Where a drop or a copy lands: a folder row of the destination pane, or the folder the
   * pane shows. `known` = the destination's listing when we have it (for the duplicate check).
   */
  function destinationOf(side: PaneSide, folder?: Crumb) {
    const state = pane(side);
    const trail = folder ? [...state.trail, folder] : state.trail;
    return {
      target: state.target,
      trail,
      containerId: trail.at(-1)?.id ?? null,
      known: folder ? null : state.items,
    };
  }

  /**
   * How a destination whose records keep no folders keeps those of this write: asked only when
   * it has some (`nested`), the last choice for that target preselected. `{}` when there is
   * nothing to choose (the server's default applies); null when the person cancelled.
   */
  async function chooseFolderMode(target: string, where: string, nested: () => boolean | Promise<boolean>): Promise<{ folders?: FolderMode } | null> {
    const modes = s.session.folderModes(target);
    if (modes.length === 0 || !(await nested())) return {};
    const folders = await askFolderMode(s.ui, { where, modes, initial: folderModes.get(target) ?? modes[0]! });
    if (folders === null) return null;
    folderModes.set(target, folders);
    return { folders };
  }

  /** `loadConflicts`: what is already there, file by file, for a per-file choice. */
  async function chooseDuplicateAction(
    names: readonly string[],
    known: readonly ResourceSummary[] | null,
    containerId: string | null,
    label: string,
    loadConflicts?: () => Promise<FileConflict[]>,
  ): Promise<DuplicateDecision | null> {
    // a new top-level resource gets a distinct name if taken: nothing can be overwritten
    if (containerId === null) return { action: 'ignore' };
    if (known) {
      const titles = new Set(known.map((item) => item.title));
      if (!names.some((name) => titles.has(name))) return { action: 'ignore' };
    }
    return s.duplicates.ask(label, loadConflicts ? { loadConflicts } : {});
  }

  /** panes showing where a finished job wrote list it again */
  function refreshDestination(job: Job): void {
    s.details.invalidate(job.target);
    for (const side of ['left', 'right'] as const) {
      const state = pane(side);
      if (state.target === job.target && containerOf(state) === job.resource_id) void state.refresh();
    }
  }

  /** A job of this window ended: its destination lists again; a comparison shows its findings. */
  function jobFinished(job: Job): void {
    if (job.kind !== 'check') return refreshDestination(job);
    // a check writes nothing: no pane needs listing again
    if (compareTickets.delete(job.ticket_number)) s.ui.setState({ checkShown: job.ticket_number });
  }

  async function track(ticket: string, submission: Submission): Promise<void> {
    s.jobs.remember(ticket, submission);
    // the event stream may have reported it finished before we knew it was ours
    const known = s.jobs.store.getState().jobs[ticket];
    if (known && isFinished(known.job.status)) jobFinished(known.job);
    try {
      s.jobs.event(await s.api.job(ticket));
    } catch {
      /* the event stream will bring it */
    }
  }

  /**
   * Before a transfer makes a new top-level record where metadata is kept: the review of the
   * source's metadata. Null when the person cancelled (nothing is sent then); `metadata` set
   * when they edited it, to send instead of the source's (unedited, the core carries the
   * source's own, which is what was shown).
   */
  async function reviewNewRecord(destination: string, source: { target: string; id: string }, title: string): Promise<{ metadata?: DescriptiveMetadata } | null> {
    if (!s.session.keepsMetadata(destination)) return {};
    let original: DescriptiveMetadata = {};
    let readError: string | null = null;
    try {
      original = await s.api.metadata(source.target, source.id);
    } catch (error) {
      // a source that describes nothing (405) simply has nothing to show
      if (!(error instanceof ApiRequestError && error.status === 405)) readError = messageOf(error);
    }
    const shown = reviewOf(original, title);
    const passedThrough = [original.related_identifiers?.length ? 'related identifiers' : '', original.funding?.length ? 'funding' : ''].filter(Boolean);
    const answer = await askMetadataReview(s.ui, { target: destination, where: s.session.readableName(destination), metadata: shown, readError, passedThrough });
    if (answer === null) return null;
    return sameMetadata(answer, shown) ? {} : { metadata: describedOf(answer, original) };
  }

  async function sendUpload(side: PaneSide, submission: Submission, blob: Blob): Promise<void> {
    const { destination } = submission;
    const ack = await s.api.upload(destination.target, destination.containerId, blob, submission.duplicateAction, {
      provenance: submission.provenance !== false,
      ...(submission.duplicateChoices ? { duplicateChoices: submission.duplicateChoices } : {}),
      ...(submission.folders ? { folders: submission.folders } : {}),
    });
    await track(ack.ticket_number, submission);
  }

  async function uploadPicked(side: PaneSide, picked: Picked, folder?: Crumb): Promise<void> {
    const dest = destinationOf(side, folder);
    if (!dest.target) {
      setNotice(s.ui, side, { kind: 'error', text: 'Choose a target in this pane first, then drop the files again.' });
      return;
    }
    if (picked.files.length === 0 && picked.emptyFolders.length === 0) {
      setNotice(s.ui, side, { kind: 'info', text: 'Nothing to upload: the drop held no files.' });
      return;
    }
    const atTop = dest.containerId === null;
    let looseName = 'Upload';
    if (atTop && picked.files.some((f) => !f.path.includes('/'))) {
      const answer = await askText(s.ui, {
        title: 'New folder for these files',
        label: `At the top level of ${s.session.readableName(dest.target)}, files go into a new folder. Its name:`,
        initial: `Upload ${new Date().toISOString().slice(0, 10)}`,
        confirm: 'Upload',
      });
      if (!answer) return;
      looseName = answer;
    }
    const names = topLevelNames(picked);
    const where = describe(dest.target, dest.trail);
    const count = picked.files.length;
    const label = `${count} file${count === 1 ? '' : 's'} → ${where}`;
    const into = dest.containerId;
    const destTarget = dest.target;
    // the per-file view's list: the files described as the ZIP will hold them (into a folder, their picked paths)
    const loadConflicts =
      into === null
        ? undefined
        : async () => {
            const conflicts: FileConflict[] = [];
            for (const files of sizedGroups(await describeFiles(picked.files), (file) => JSON.stringify(file).length + 1)) {
              conflicts.push(...(await s.api.conflicts(destTarget, into, { files })).conflicts);
            }
            return conflicts;
          };
    const chosen = await chooseDuplicateAction(names, dest.known, dest.containerId, `${names.join(', ')} into ${where}`, loadConflicts);
    if (!chosen) return;
    // the form field is small: the most common choice goes as the action for all
    const decision = compacted(chosen);
    const mode = await chooseFolderMode(dest.target, where, () => hasSubfolders(picked, atTop));
    if (!mode) return;
    // an upload carries no descriptive metadata (the API takes none with a ZIP): nothing to review
    const plans = planUploads(picked, atTop, looseName);
    setNotice(s.ui, side, { kind: 'info', text: `Packing ${label}…` });
    try {
      for (const plan of plans) {
        const blob = await zipBlob(plan);
        const blobKey = `upload-${++blobCounter}`;
        uploadBlobs.set(blobKey, blob);
        const submission: Submission = {
          kind: 'upload',
          label: plan.folder && atTop ? `${plan.folder} → ${where}` : label,
          destination: { target: dest.target, containerId: dest.containerId, trail: dest.trail },
          duplicateAction: decision.action,
          ...(decision.choices ? { duplicateChoices: decision.choices } : {}),
          ...mode,
          blobKey,
          provenance: s.ui.getState().provenance,
        };
        await sendUpload(side, submission, blob);
      }
      setNotice(s.ui, side, null);
    } catch (error) {
      setNotice(s.ui, side, {
        kind: 'error',
        text: `The upload could not start: ${messageOf(error)}`,
        retry: () => void uploadPicked(side, picked, folder),
      });
    }
  }

  /**
   * Whether a transfer sends folders a destination without folders must keep somehow: into a
   * folder, any folder selected; at the top level (each item becomes a record), a folder inside
   * one (one listing of each selected folder).
   */
  async function hasFolders(target: string, items: readonly ResourceSummary[], atTopLevel: boolean): Promise<boolean> {
    const folders = items.filter((item) => item.kind === 'container');
    if (!atTopLevel) return folders.length > 0;
    try {
      for (const folder of folders) {
        if ((await s.api.children(target, folder.id)).some((child) => child.kind === 'container')) return true;
      }
      return false;
    } catch {
      // not known: asking costs a click, not asking could pack folders the person wanted otherwise
      return folders.length > 0;
    }
  }

  async function transferSelection(from: PaneSide, to: PaneSide, folder?: Crumb, ids?: readonly string[]): Promise<void> {
    const source = pane(from);
    const wanted = ids ? new Set(ids) : null;
    const items = wanted ? source.items.filter((item) => wanted.has(item.id)) : selectedItems(from);
    const dest = destinationOf(to, folder);
    if (!source.target || items.length === 0) {
      setNotice(s.ui, from, { kind: 'info', text: 'Select something to copy first.' });
      return;
    }
    if (!dest.target) {
      setNotice(s.ui, to, { kind: 'error', text: 'Choose a target in this pane to copy into.' });
      return;
    }
    if (dest.target === source.target && items.some((item) => item.id === dest.containerId)) {
      setNotice(s.ui, to, { kind: 'error', text: 'A folder cannot be copied into itself.' });
      return;
    }
    const where = describe(dest.target, dest.trail);
    // Into a folder, the selection is one job (or a few, if its ids would not fit one request
    // body); at a target's top level each item becomes a resource of its own, so one job each.
    const groups = dest.containerId === null ? items.map((item) => [item]) : requestSizedGroups(items);
    const sourceTarget = source.target;
    const sourceOf = (group: readonly ResourceSummary[]) => ({ target: sourceTarget, id: group[0]!.id, ids: group.length > 1 ? group.map((item) => item.id) : undefined });
    const { target: destTarget, containerId: into } = dest;
    // the per-file view's list: what each group's transfer would find already there
    const loadConflicts =
      into === null
        ? undefined
        : async () => {
            const conflicts: FileConflict[] = [];
            for (const group of groups) conflicts.push(...(await s.api.conflicts(destTarget, into, sourceOf(group))).conflicts);
            return conflicts;
          };
    const decision = await chooseDuplicateAction(
      items.map((item) => item.title),
      dest.known,
      dest.containerId,
      `${items.length === 1 ? items[0]!.title : `${items.length} items`} into ${where}`,
      loadConflicts,
    );
    if (!decision) return;
    const mode = await chooseFolderMode(dest.target, where, () => hasFolders(sourceTarget, items, dest.containerId === null));
    if (!mode) return;
    // each item becomes a record of its own at the top level: each is reviewed before anything is sent
    const reviewed = new Map<string, DescriptiveMetadata>();
    if (dest.containerId === null) {
      for (const item of items) {
        const review = await reviewNewRecord(dest.target, { target: source.target, id: item.id }, item.title);
        if (!review) return;
        if (review.metadata) reviewed.set(item.id, review.metadata);
      }
    }
    const failures: string[] = [];
    const notStarted: string[] = [];
    for (const group of groups) {
      const first = group[0]!;
      const title = group.length === 1 ? first.title : `${group.length} items from ${describe(source.target, source.trail)}`;
      const { ids: groupIds } = sourceOf(group);
      const metadata = reviewed.get(first.id);
      const submission: Submission = {
        kind: 'transfer',
        label: `${title} → ${where}`,
        destination: { target: dest.target, containerId: dest.containerId, trail: dest.trail },
        source: { target: source.target, id: first.id, title, ...(groupIds ? { ids: groupIds } : {}) },
        duplicateAction: decision.action,
        ...(decision.choices ? { duplicateChoices: decision.choices } : {}),
        ...mode,
        provenance: s.ui.getState().provenance,
        ...(metadata ? { metadata } : {}),
      };
      try {
        const ack = await s.api.transfer(dest.target, dest.containerId, sourceOf(group), decision.action, {
          provenance: submission.provenance !== false,
          metadata,
          ...(decision.choices ? { duplicateChoices: decision.choices } : {}),
          ...mode,
        });
        await track(ack.ticket_number, submission);
      } catch (error) {
        failures.push(`${title}: ${messageOf(error)}`);
        notStarted.push(...group.map((item) => item.id));
      }
    }
    setNotice(
      s.ui,
      to,
      failures.length
        ? {
            kind: 'error',
            text: `The copy could not start. ${failures.join(' ')}`,
            // only what did not start: the rest is already on its way
            retry: () => void transferSelection(from, to, folder, notStarted),
          }
        : null,
    );
  }

  const operations = createFileOperations(s, { selectedItems, describe });

  async function newFolder(side: PaneSide): Promise<void> {
    const dest = destinationOf(side);
    if (!dest.target) {
      setNotice(s.ui, side, { kind: 'error', text: 'Choose a target in this pane first.' });
      return;
    }
    if ((await operations.createFolder(side)) === 'done') return;
    // the target has no folder operation: an upload of one empty folder makes it (a job)
    const name = await askText(s.ui, {
      title: 'New folder',
      label: `Name of the new folder in ${describe(dest.target, dest.trail)}:`,
      initial: 'New folder',
      confirm: 'Create',
    });
    if (!name) return;
    if (name.includes('/') || name === '.' || name === '..') {
      setNotice(s.ui, side, { kind: 'error', text: 'A folder name cannot contain "/" or be "." or "..".' });
      return;
    }
    if (dest.known?.some((item) => item.title === name)) {
      setNotice(s.ui, side, { kind: 'error', text: `"${name}" already exists here.` });
      return;
    }
    try {
      const blob = await zipBlob(newFolderPlan(name));
      await sendUpload(
        side,
        {
          kind: 'upload',
          label: `New folder ${name} → ${describe(dest.target, dest.trail)}`,
          destination: { target: dest.target, containerId: dest.containerId, trail: dest.trail },
          duplicateAction: 'ignore',
        },
        blob,
      );
      setNotice(s.ui, side, null);
    } catch (error) {
      setNotice(s.ui, side, {
        kind: 'error',
        text: `The folder could not be created: ${messageOf(error)}`,
        retry: () => void newFolder(side),
      });
    }
  }

  /** The download notice: what is being saved and how far it got (the total is rarely known: a bag is made as it streams). */
  function showDownloadProgress(side: PaneSide, name: string, done: number, total: number | null, stop?: AbortController): void {
    setNotice(s.ui, side, {
      kind: 'info',
      text: `Downloading ${name}: ${formatBytes(done)}${total ? ` of ${formatBytes(total)}` : ' so far'}…`,
      progress: { done, total },
      ...(stop ? { cancel: () => stop.abort() } : {}),
    });
  }

  /**
   * Saves one download in browser mode and says what really happened: `saved` when the File
   * System Access picker gave a file and every byte was written to it; `cancelled` when its
   * dialog was dismissed (no request was made, so nothing was saved or kept); `handed` when
   * the browser's own download took the bytes — whether it then saved them is the browser's
   * business, and Ferry cannot know.
   */
  async function saveInBrowser(path: string, name: string, side: PaneSide): Promise<'saved' | 'cancelled' | 'handed'> {
    // Cancel in the notice stops the request; a stopped download is reported as cancelled
    const stop = new AbortController();
    const progress = (done: number, total: number | null) => showDownloadProgress(side, name, done, total, stop);
    try {
      return await saveOrHand(path, name, progress, stop.signal);
    } catch (error) {
      if (stop.signal.aborted) return 'cancelled';
      throw error;
    }
  }

  async function saveOrHand(
    path: string,
    name: string,
    progress: (done: number, total: number | null) => void,
    signal: AbortSignal,
  ): Promise<'saved' | 'cancelled' | 'handed'> {
    const picker = (globalThis as { showSaveFilePicker?: (o: unknown) => Promise<FileSystemFileHandle> })
      .showSaveFilePicker;
    if (picker) {
      let handle: FileSystemFileHandle | null = null;
      try {
        handle = await picker({ suggestedName: name, types: [{ description: 'ZIP', accept: { 'application/zip': ['.zip'] } }] });
      } catch (error) {
        if (error instanceof DOMException && error.name === 'AbortError') return 'cancelled';
        handle = null; // picker unavailable here: fall back below
      }
      if (handle) {
        progress(0, null);
        const response = await s.api.download(path, signal);
        const writable = await (handle as FileSystemFileHandle & { createWritable(): Promise<WritableStream> }).createWritable();
        // streamed to disk, never whole in memory; a failure or Cancel aborts the writable,
        // which discards what it held (the chosen file is not left half-written)
        await counted(response, progress).pipeTo(writable, { signal });
        return 'saved';
      }
    }
    // fallback: the whole ZIP goes through memory, fine for small downloads
    progress(0, null);
    const response = await s.api.download(path, signal);
    const blob = await new Response(counted(response, progress)).blob();
    const url = URL.createObjectURL(blob);
    const link = document.createElement('a');
    link.href = url;
    link.download = name;
    link.click();
    setTimeout(() => URL.revokeObjectURL(url), 60_000);
    return 'handed';
  }

  async function download(side: PaneSide, keepOffline: boolean): Promise<void> {
    const state = pane(side);
    const items = selectedItems(side);
    if (!state.target || items.length === 0) {
      setNotice(s.ui, side, { kind: 'info', text: 'Select what to download first.' });
      return;
    }
    const kept = keepOffline ? ` A copy is kept in ${s.session.readableName(LIBRARY_TARGET)}.` : '';
    const target = state.target;
    // a selection is one download: one bag, one save dialog
    const place = state.trail.at(-1)?.title ?? s.session.readableName(target);
    const label = items.length === 1 ? items[0]!.title : `${place} (${items.length} items)`;
    const name = `${label}.zip`;
    try {
      const path =
        items.length === 1
          ? downloadPath(target, items[0]!.id, keepOffline)
          : `${await s.api.selection(target, items.map((item) => item.id))}${keepOffline ? '?keep=1' : ''}`;
      let outcome: 'saved' | 'cancelled' | 'handed';
      if (s.bridge) {
        showDownloadProgress(side, name, 0, null);
        const stop = s.bridge.onProgress((progress) => {
          if (progress.id !== 'drag-out' && !progress.done) showDownloadProgress(side, name, progress.bytes, progress.total);
        });
        try {
          const result = await s.bridge.download({ path, suggestedName: name });
          if (result.status === 'failed') throw new Error(result.error);
          outcome = result.status;
        } finally {
          stop();
        }
      } else {
        outcome = await saveInBrowser(path, name, side);
      }
      if (outcome === 'cancelled') {
        // the save dialog came before any request: nothing was downloaded, saved or kept
        setNotice(s.ui, side, { kind: 'info', text: `Download cancelled: nothing was saved${keepOffline ? ' or kept' : ''}.` });
        return;
      }
      setNotice(s.ui, side, {
        kind: 'info',
        text:
          outcome === 'saved'
            ? `${name} saved.${kept}`
            : `${name} was handed to the browser: find it in the browser's downloads (if its save dialog was cancelled, nothing was saved there).${kept}`,
      });
      if (keepOffline) void showKeptCopies();
    } catch (error) {
      setNotice(s.ui, side, {
        kind: 'error',
        text: `${label} could not be downloaded, and nothing was saved: ${messageOf(error)}`,
        retry: () => void download(side, keepOffline),
      });
    }
  }

  /**
   * A kept copy is renamed into the library just after its last byte left the server, so a
   * pane showing the library's top level lists it again until the new archive is there.
   */
  async function showKeptCopies(delays: readonly number[] = [0, 300, 1000, 2500]): Promise<void> {
    s.details.invalidate(LIBRARY_TARGET);
    const sides = (['left', 'right'] as const).filter(
      (side) => pane(side).target === LIBRARY_TARGET && pane(side).trail.length === 0,
    );
    await Promise.all(
      sides.map(async (side) => {
        const before = new Set(pane(side).items.map((item) => item.id));
        for (const delay of delays) {
          await sleep(delay);
          const state = pane(side);
          if (state.target !== LIBRARY_TARGET || state.trail.length > 0) return; // moved away meanwhile
          await state.refresh();
          if (pane(side).items.some((item) => !before.has(item.id))) return;
        }
      }),
    );
  }

  /** Starts a verify job for each selected top-level archive (or the given ids). */
  async function verify(side: PaneSide, ids?: readonly string[]): Promise<void> {
    const state = pane(side);
    const target = state.target;
    if (!target || !canVerify(target)) {
      setNotice(s.ui, side, {
        kind: 'error',
        text: `Only archives in ${s.session.readableName(LIBRARY_TARGET)} can be verified.`,
      });
      return;
    }
    const items = ids ? state.items.filter((item) => ids.includes(item.id)) : verifiableItems(side);
    if (state.trail.length > 0 || items.length === 0) {
      setNotice(s.ui, side, {
        kind: 'info',
        text: `Select an archive at the top of ${s.session.readableName(target)} to verify it.`,
      });
      return;
    }
    const failures: string[] = [];
    for (const item of items) {
      const submission: Submission = {
        kind: 'verify',
        label: `Verify ${item.title}`,
        destination: { target, containerId: null, trail: [] },
        source: { target, id: item.id, title: item.title },
        duplicateAction: 'ignore',
      };
      try {
        const ack = await s.api.verify(target, item.id);
        await track(ack.ticket_number, submission);
      } catch (error) {
        failures.push(`${item.title}: ${messageOf(error)}`);
      }
    }
    setNotice(
      s.ui,
      side,
      failures.length
        ? {
            kind: 'error',
            text: `Verification could not start. ${failures.join(' ')}`,
            retry: () => void verify(side, ids ?? items.map((item) => item.id)),
          }
        : null,
    );
  }

  /** Starts a check job comparing `destination` with `source` (docs/api.md "Check"); its findings open when it ends. */
  async function compare(
    side: PaneSide,
    source: { target: string; id: string; title: string },
    destination: { target: string; id: string; title: string; trail: Crumb[] },
    readBytes = false,
  ): Promise<void> {
    // the destination is the last crumb of its trail: a retry, or a check reading the bytes, finds it there
    const trail = [...destination.trail, { id: destination.id, title: destination.title }];
    const submission: Submission = {
      kind: 'check',
      label: `Compare ${source.title} with ${describe(destination.target, trail)}${readBytes ? ', reading the bytes' : ''}`,
      destination: { target: destination.target, containerId: destination.id, trail },
      source: { target: source.target, id: source.id, title: source.title },
      duplicateAction: 'ignore',
    };
    try {
      const ack = await s.api.check(destination, source, readBytes);
      compareTickets.add(ack.ticket_number);
      await track(ack.ticket_number, submission);
    } catch (error) {
      setNotice(s.ui, side, {
        kind: 'error',
        text: `The comparison could not start: ${messageOf(error)}`,
        retry: () => void compare(side, source, destination, readBytes),
      });
    }
  }

  /** The same comparison as a finished check job's, reading the bytes where no hash is in common. */
  async function compareReadingBytes(job: Job): Promise<void> {
    const submission = s.jobs.store.getState().submissions[job.ticket_number];
    const source = submission?.source ?? (job.source ? { target: job.source.target, id: job.source.resource_id, title: job.source.resource_id } : null);
    if (!source || !job.resource_id) return;
    const trail = submission?.destination.trail ?? [];
    const title = trail.at(-1)?.title ?? job.resource_id;
    await compare(s.ui.getState().active, source, { target: job.target, id: job.resource_id, title, trail: trail.slice(0, -1) }, true);
  }

  /** Compares what is selected in the active pane (the source) with what is selected in the other (the destination). */
  async function compareSelected(side: PaneSide): Promise<void> {
    const [source] = selectedItems(side);
    const [destination] = selectedItems(otherSide(side));
    const from = pane(side);
    const to = pane(otherSide(side));
    if (!from.target || !to.target || !source || !destination || selectedItems(side).length > 1 || selectedItems(otherSide(side)).length > 1) {
      setNotice(s.ui, side, {
        kind: 'info',
        text: 'To compare, select one file or folder in each pane: this one is the source, the other pane’s the copy to check.',
      });
      return;
    }
    await compare(side, { target: from.target, id: source.id, title: source.title }, { target: to.target, id: destination.id, title: destination.title, trail: to.trail });
  }

  /**
   * Compares a finished transfer's source with what it made: the resource named after the
   * first path it created (a taken name gets another, e.g. "Data (2)"), else the source's title.
   */
  async function compareTransfer(job: Job): Promise<string | null> {
    const submission = s.jobs.store.getState().submissions[job.ticket_number];
    if (!submission?.source || submission.source.ids) return 'Only a transfer of one file or folder started in this window can be compared here; select both in the panes and use Compare.';
    const source = submission.source;
    const made = job.report?.resources_created[0]?.split('/')[0] ?? source.title;
    try {
      const rows = await s.api.children(submission.destination.target, submission.destination.containerId);
      const copy = rows.find((row) => row.title === made) ?? rows.find((row) => row.title === source.title);
      if (!copy) return `“${made}” is not in ${describe(submission.destination.target, submission.destination.trail)} any more, so there is nothing to compare.`;
      await compare(s.ui.getState().active, source, { target: submission.destination.target, id: copy.id, title: copy.title, trail: submission.destination.trail });
      return null;
    } catch (error) {
      return messageOf(error);
    }
  }

  /** "Calculate size": the selected folders' total, all the way down, in the pane's notice (Cancel stops it). */
  async function calculateSize(side: PaneSide): Promise<void> {
    const state = pane(side);
    const target = state.target;
    const folders = selectedItems(side).filter((item) => item.kind === 'container');
    if (!target || folders.length === 0) {
      setNotice(s.ui, side, { kind: 'info', text: 'Select a folder to calculate its size.' });
      return;
    }
    const name = folders.length === 1 ? `“${folders[0]!.title}”` : `${folders.length} folders`;
    const stop = new AbortController();
    const say = (size: FolderSize, done: boolean) =>
      `${name}${done ? '' : ' so far'}: ${formatBytes(size.bytes)} in ${size.files} file${size.files === 1 ? '' : 's'} and ${size.folders} folder${size.folders === 1 ? '' : 's'}` +
      (size.unknown ? ` (${size.unknown} file${size.unknown === 1 ? '' : 's'} of unknown size not counted)` : '') +
      (done ? '.' : '…');
    const list = (id: string, signal: AbortSignal) => s.api.children(target, id, signal, true);
    const sum: FolderSize = { bytes: 0, files: 0, folders: 0, unknown: 0 };
    try {
      for (const folder of folders) {
        const before = { ...sum };
        const part = await folderSize(list, folder.id, stop.signal, (sofar) =>
          setNotice(s.ui, side, {
            kind: 'info',
            text: say({ bytes: before.bytes + sofar.bytes, files: before.files + sofar.files, folders: before.folders + sofar.folders, unknown: before.unknown + sofar.unknown }, false),
            cancel: () => stop.abort(),
          }),
        );
        sum.bytes += part.bytes;
        sum.files += part.files;
        sum.folders += part.folders;
        sum.unknown += part.unknown;
      }
      setNotice(s.ui, side, { kind: 'info', text: say(sum, true) });
    } catch (error) {
      setNotice(s.ui, side, stop.signal.aborted
        ? { kind: 'info', text: `Size of ${name} not calculated: cancelled.` }
        : { kind: 'error', text: `The size of ${name} could not be calculated: ${messageOf(error)}`, retry: () => void calculateSize(side) });
    }
  }

  async function refresh(side: PaneSide): Promise<void> {
    const target = pane(side).target;
    if (target) s.details.invalidate(target);
    setNotice(s.ui, side, null);
    await s.panes[side].getState().refresh();
  }

  async function cancelJob(ticket: string): Promise<string | null> {
    try {
      s.jobs.event(await s.api.cancelJob(ticket));
      return null;
    } catch (error) {
      if (error instanceof ApiRequestError && error.status === 409) return 'The job had already finished.';
      return messageOf(error);
    }
  }

  /** Asks the server for a new job of the finished job's failed files only. */
  async function retryFailedFiles(ticket: string): Promise<string | null> {
    return runAgain(ticket, () => s.api.retryFailedFiles(ticket), retryLabel);
  }

  /** A cancelled or failed transfer goes on where it stopped: the files it completed are not sent again. */
  async function resumeJob(ticket: string): Promise<string | null> {
    return runAgain(ticket, () => s.api.resumeJob(ticket), (label) => label);
  }

  /** A new job from a finished one (retry, resume), tracked under the first one's label. */
  async function runAgain(ticket: string, request: () => Promise<{ ticket_number: string }>, labelled: (label: string) => string): Promise<string | null> {
    try {
      const ack = await request();
      const submission = s.jobs.store.getState().submissions[ticket];
      if (submission) await track(ack.ticket_number, { ...submission, label: labelled(submission.label) });
      else s.jobs.event(await s.api.job(ack.ticket_number));
      return null;
    } catch (error) {
      return messageOf(error);
    }
  }

  /** Cancels every job still waiting or running; says how many, and which could not be. */
  async function cancelAll(): Promise<{ kind: 'info' | 'error'; text: string }> {
    const { jobs, order } = s.jobs.store.getState();
    const tickets = order.filter((ticket) => jobs[ticket] && !isFinished(jobs[ticket]!.job.status));
    let cancelled = 0;
    const problems: string[] = [];
    let next = 0;
    const worker = async () => {
      while (next < tickets.length) {
        const ticket = tickets[next++]!;
        const problem = await cancelJob(ticket);
        if (problem === null) cancelled++;
        else if (problem !== 'The job had already finished.') problems.push(problem);
      }
    };
    await Promise.all(Array.from({ length: Math.min(4, tickets.length) }, worker));
    const done = `${cancelled} job${cancelled === 1 ? '' : 's'} cancelled.`;
    if (problems.length === 0) return { kind: 'info', text: done };
    return { kind: 'error', text: `${done} ${problems.length} could not be cancelled: ${[...new Set(problems)].join(' ')}` };
  }

  /** Resubmits a failed or cancelled job with the parameters it was started with. */
  async function retryJob(ticket: string): Promise<string | null> {
    const submission = s.jobs.store.getState().submissions[ticket];
    if (!submission) return 'This job was started elsewhere, so Ferry does not know how to resubmit it.';
    try {
      if (submission.kind === 'verify' && submission.source) {
        const ack = await s.api.verify(submission.source.target, submission.source.id);
        await track(ack.ticket_number, submission);
        return null;
      }
      if (submission.kind === 'check' && submission.source && submission.destination.containerId) {
        const ack = await s.api.check({ target: submission.destination.target, id: submission.destination.containerId }, submission.source, submission.label.endsWith(', reading the bytes'));
        compareTickets.add(ack.ticket_number);
        await track(ack.ticket_number, submission);
        return null;
      }
      if (submission.kind === 'transfer' && submission.source) {
        const { destination, source } = submission;
        const ack = await s.api.transfer(destination.target, destination.containerId, source, submission.duplicateAction, {
          provenance: submission.provenance !== false,
          metadata: submission.metadata,
          ...(submission.duplicateChoices ? { duplicateChoices: submission.duplicateChoices } : {}),
          ...(submission.folders ? { folders: submission.folders } : {}),
        });
        await track(ack.ticket_number, submission);
        return null;
      }
      const blob = submission.blobKey ? uploadBlobs.get(submission.blobKey) : undefined;
      if (!blob) return 'The files of this upload are no longer at hand; drop them again to upload.';
      await sendUpload(s.ui.getState().active, submission, blob);
      return null;
    } catch (error) {
      return messageOf(error);
    }
  }

  /** Shows a job's destination in the active pane. */
  async function openDestination(job: Job): Promise<void> {
    const submission = s.jobs.store.getState().submissions[job.ticket_number];
    const side = s.ui.getState().active;
    if (submission) {
      await s.panes[side].getState().setTarget(submission.destination.target, submission.destination.trail);
      // a verify job's "destination" is the archive itself: put the cursor on it
      if (submission.kind === 'verify' && submission.source) s.panes[side].getState().select(submission.source.id, 'replace', []);
      return;
    }
    let trail: Crumb[] = [];
    if (job.resource_id) {
      const entry = await s.details.load(job.target, job.resource_id);
      trail = [{ id: job.resource_id, title: entry.state === 'ready' ? entry.detail.title : 'Destination' }];
    }
    await s.panes[side].getState().setTarget(job.target, trail);
  }

  /** Loads the job list and follows the event stream until `signal` aborts. */
  function followJobs(signal: AbortSignal): void {
    const catchUp = async () => {
      try {
        s.jobs.load(await s.api.jobs());
        s.jobs.setLoadError(null);
      } catch (error) {
        s.jobs.setLoadError(`The job list could not be loaded: ${messageOf(error)}`);
      }
    };
    void catchUp();
    void streamSse({
      url: `${s.api.baseUrl}/api_v1/jobs/events/`,
      headers: s.api.authHeaders,
      signal,
      onOpen: () => {
        s.jobs.setStream('live');
        void catchUp(); // whatever changed while we were away
      },
      onError: () => s.jobs.setStream('reconnecting'),
      onMessage: (message) => {
        if (message.event !== 'job') return;
        try {
          s.jobs.event(JSON.parse(message.data) as Job);
        } catch {
          /* a malformed event is skipped; the next catch-up corrects the state */
        }
      },
    });
    // when a job finishes, panes showing its destination list it again
    const stop = s.jobs.onChange((view, previous) => {
      if (!isFinished(view.job.status) || (previous && isFinished(previous.job.status))) return;
      // a job first seen finished is stale news, unless this window just submitted it
      if (!previous && !s.jobs.store.getState().submissions[view.job.ticket_number]) return;
      jobFinished(view.job);
    });
    signal.addEventListener('abort', stop);
  }

  return {
    ...operations,
    describe,
    selectedItems,
    canVerify,
    verifiableItems,
    verify,
    compare,
    compareSelected,
    compareTransfer,
    compareReadingBytes,
    calculateSize,
    showKeptCopies,
    uploadPicked,
    transferSelection,
    newFolder,
    download,
    refresh,
    cancelJob,
    cancelAll,
    retryJob,
    retryFailedFiles,
    resumeJob,
    openDestination,
    followJobs,
  };
}
