import type { DuplicateFileAction, FolderMode } from '../../../shared/api.js';
import { DUPLICATE_FILE_ACTIONS, FOLDER_MODES } from '../../../shared/api.js';
import { FerryError } from '../errors.js';
import type { DescriptiveMetadata } from '../target.js';

// What the two writing job kinds are submitted with, as saved in the job's file (no token),
// and read back from it: a resumed job's params come from disk, so their shape is checked,
// never trusted.

/** What an `upload` job is submitted with (persisted; no token). */
export interface UploadParams {
  /** the spooled ZIP, owned by the job */
  spoolPath: string;
  containerId: string | null;
  duplicateAction: DuplicateFileAction;
  /** per file, by its path in the ZIP: the action instead of duplicateAction */
  duplicateChoices?: Record<string, DuplicateFileAction>;
  /** how a destination that keeps no folders keeps them (absent: flatten) */
  folders?: FolderMode;
}

/** What a `transfer` job is submitted with (persisted; no token). */
export interface TransferParams {
  /**
   * `resourceIds`, when present, is the whole selection (its first is `resourceId`): one job
   * copies them all into the one container, one after the other, through one write.
   */
  source: { target: string; resourceId: string; resourceIds?: string[] };
  containerId: string | null;
  duplicateAction: DuplicateFileAction;
  /** per file, by its path as the source names it: the action instead of duplicateAction */
  duplicateChoices?: Record<string, DuplicateFileAction>;
  /** how a destination that keeps no folders keeps them (absent: flatten) */
  folders?: FolderMode;
  /** a retry: only these files (as the source names them) and the folders above them */
  only?: string[];
  /**
   * a retry of a top-level transfer: its files go inside the resource the first run made
   * (containerId), so the source's top folder, named here, is left out of their paths
   */
  insideTop?: string;
  /** a new top-level resource's descriptive metadata as a person reviewed it, used instead of the source's */
  metadata?: DescriptiveMetadata;
}

export function uploadParams(raw: Record<string, unknown>): UploadParams {
  if (typeof raw.spoolPath !== 'string' || raw.spoolPath === '') throw brokenJob('upload');
  return { spoolPath: raw.spoolPath, containerId: containerIdOf(raw), duplicateAction: duplicateActionOf(raw), ...duplicateChoicesOf(raw), ...foldersOf(raw) };
}

export function transferParams(raw: Record<string, unknown>): TransferParams {
  const source = raw.source as { target?: unknown; resourceId?: unknown; resourceIds?: unknown } | undefined;
  if (!source || typeof source.target !== 'string' || typeof source.resourceId !== 'string') throw brokenJob('transfer');
  const only = Array.isArray(raw.only) && raw.only.every((item) => typeof item === 'string') ? (raw.only as string[]) : undefined;
  const ids = source.resourceIds;
  if (ids !== undefined && (!Array.isArray(ids) || !ids.every((id): id is string => typeof id === 'string'))) throw brokenJob('transfer');
  return {
    source: { target: source.target, resourceId: source.resourceId, ...(ids ? { resourceIds: ids } : {}) },
    containerId: containerIdOf(raw),
    duplicateAction: duplicateActionOf(raw),
    ...duplicateChoicesOf(raw),
    ...foldersOf(raw),
    ...(only ? { only } : {}),
    ...(typeof raw.insideTop === 'string' ? { insideTop: raw.insideTop } : {}),
    // checked against the DescriptiveMetadata schema when the request came in
    ...(raw.metadata && typeof raw.metadata === 'object' ? { metadata: raw.metadata as DescriptiveMetadata } : {}),
  };
}

function containerIdOf(raw: Record<string, unknown>): string | null {
  if (raw.containerId === null || raw.containerId === undefined) return null;
  if (typeof raw.containerId !== 'string') throw brokenJob('job');
  return raw.containerId;
}

function duplicateActionOf(raw: Record<string, unknown>): DuplicateFileAction {
  const action = raw.duplicateAction;
  if (isDuplicateAction(action)) return action;
  throw brokenJob('job');
}

function duplicateChoicesOf(raw: Record<string, unknown>): { duplicateChoices?: Record<string, DuplicateFileAction> } {
  const choices = raw.duplicateChoices;
  if (choices === undefined) return {};
  if (typeof choices !== 'object' || choices === null || !Object.values(choices).every(isDuplicateAction)) throw brokenJob('job');
  return { duplicateChoices: choices as Record<string, DuplicateFileAction> };
}

function isDuplicateAction(value: unknown): value is DuplicateFileAction {
  return typeof value === 'string' && (DUPLICATE_FILE_ACTIONS as readonly string[]).includes(value);
}

/** Absent in jobs saved before folder modes: flatten, as they were written. */
function foldersOf(raw: Record<string, unknown>): { folders?: FolderMode } {
  if (raw.folders === undefined) return {};
  if (typeof raw.folders === 'string' && (FOLDER_MODES as readonly string[]).includes(raw.folders)) return { folders: raw.folders as FolderMode };
  throw brokenJob('job');
}

function brokenJob(kind: string): FerryError {
  return new FerryError(500, 'internal_error', `This ${kind} job's saved parameters are incomplete; submit it again.`);
}
