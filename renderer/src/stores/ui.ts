// Small app-wide UI state: which pane is active, open dialogs, per-pane notices.
import { createStore } from 'zustand/vanilla';
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
}

export interface TextQuestion {
  title: string;
  label: string;
  initial: string;
  confirm: string;
  answer(value: string | null): void;
}

export interface UiStoreState {
  active: PaneSide;
  detailOpen: boolean;
  accountsOpen: boolean;
  question: TextQuestion | null;
  notices: Record<PaneSide, Notice | null>;
}

export function createUiStore() {
  return createStore<UiStoreState>()(() => ({
    active: 'left',
    detailOpen: false,
    accountsOpen: false,
    question: null,
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
