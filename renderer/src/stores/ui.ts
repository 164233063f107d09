// Small app-wide UI state: which pane is active, open dialogs, per-pane notices.
import { createStore } from 'zustand/vanilla';
import type { FolderMode } from '../../../shared/api.js';
import type { ReviewedMetadata } from '../metadata.js';
import type { PaneSide } from './pane.js';

export interface Notice {
  kind: 'error' | 'info';
  text: string;
  /** offered next to the message when trying again makes sense */
  retry?: () => void;
  /** work under way: a bar, indeterminate (and saying so) while the total is unknown */
  progress?: { done: number; total: number | null };
  /** stops the work under way (offered as Cancel) */
  cancel?: () => void;
  /** puts back what an operation just did (offered as Undo) */
  undo?: () => void;
}

/** A yes/no question before something that is hard to take back (a remote delete). */
export interface ConfirmQuestion {
  title: string;
  /** what happens, naming what and where */
  text: string;
  confirm: string;
  /** the confirm button is styled as dangerous */
  danger: boolean;
  answer(yes: boolean): void;
}

export interface TextQuestion {
  title: string;
  label: string;
  initial: string;
  confirm: string;
  answer(value: string | null): void;
}

/** The review of what a new record in a repository will be described with. */
export interface MetadataQuestion {
  /** the destination target's name */
  target: string;
  /** the destination as a person reads it ("Zenodo") */
  where: string;
  metadata: ReviewedMetadata;
  /** why the source's metadata could not be read (the fields are then empty), or null */
  readError: string | null;
  /** fields the form does not show that go as the source gives them ("related identifiers") */
  passedThrough: string[];
  /** the edited metadata to go ahead with, or null to cancel */
  answer(metadata: ReviewedMetadata | null): void;
}

/** "Keep folders as": how a destination whose records keep no folders keeps those of a write. */
export interface FolderModeQuestion {
  /** the destination as a person reads it ("Zenodo › Survey") */
  where: string;
  /** the modes it offers (its capabilities.folder_modes), the first the server's default */
  modes: FolderMode[];
  /** the one chosen when the dialog opens: the last chosen for this destination, else the default */
  initial: FolderMode;
  /** the mode to go ahead with, or null to cancel */
  answer(mode: FolderMode | null): void;
}

export interface UiStoreState {
  active: PaneSide;
  detailOpen: boolean;
  accountsOpen: boolean;
  /** the service Accounts opens on (e.g. from a pane that needs a token); null: the first */
  accountsTarget: string | null;
  /** the manager of local folders (add, name, remove) */
  localFoldersOpen: boolean;
  question: TextQuestion | null;
  /** uploads and transfers write a ferry-provenance.json (the server's default); off: `ferry-provenance: off` */
  provenance: boolean;
  /** the findings of a check job shown in their dialog (its ticket), or null */
  checkShown: string | null;
  confirmation: ConfirmQuestion | null;
  metadataReview: MetadataQuestion | null;
  folderMode: FolderModeQuestion | null;
  notices: Record<PaneSide, Notice | null>;
}

export function createUiStore() {
  return createStore<UiStoreState>()(() => ({
    active: 'left',
    detailOpen: false,
    accountsOpen: false,
    accountsTarget: null,
    localFoldersOpen: false,
    question: null,
    provenance: true,
    checkShown: null,
    confirmation: null,
    metadataReview: null,
    folderMode: null,
    notices: { left: null, right: null },
  }));
}

export type UiStore = ReturnType<typeof createUiStore>;

export function setNotice(ui: UiStore, side: PaneSide, notice: Notice | null): void {
  ui.setState((s) => ({ notices: { ...s.notices, [side]: notice } }));
}

export function askText(ui: UiStore, question: Omit<TextQuestion, 'answer'>): Promise<string | null> {
  return new Promise((resolve) => {
    ui.setState({
      question: {
        ...question,
        answer(value) {
          ui.setState({ question: null });
          resolve(value === null || value.trim() === '' ? null : value.trim());
        },
      },
    });
  });
}

export function askConfirm(ui: UiStore, question: Omit<ConfirmQuestion, 'answer'>): Promise<boolean> {
  return new Promise((resolve) => {
    ui.setState({
      confirmation: {
        ...question,
        answer(yes) {
          ui.setState({ confirmation: null });
          resolve(yes);
        },
      },
    });
  });
}

export function askMetadataReview(ui: UiStore, question: Omit<MetadataQuestion, 'answer'>): Promise<ReviewedMetadata | null> {
  return new Promise((resolve) => {
    ui.setState({
      metadataReview: {
        ...question,
        answer(metadata) {
          ui.setState({ metadataReview: null });
          resolve(metadata);
        },
      },
    });
  });
}

export function askFolderMode(ui: UiStore, question: Omit<FolderModeQuestion, 'answer'>): Promise<FolderMode | null> {
  return new Promise((resolve) => {
    ui.setState({
      folderMode: {
        ...question,
        answer(mode) {
          ui.setState({ folderMode: null });
          resolve(mode);
        },
      },
    });
  });
}
