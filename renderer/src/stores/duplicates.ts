// "The destination may already hold these files — what then?" Asked once per job, unless
// the user ticked "remember my choice" (kept in localStorage; it is a preference, not a secret).
// One action for all files, or — where the job can take them (a transfer or an upload into a
// folder) — a choice per file, made over the server's side-by-side list of what is already
// there (POST …/conflicts/), sent back as duplicate_choices.
import { createStore } from 'zustand/vanilla';
import { DUPLICATE_FILE_ACTIONS, type DuplicateFileAction, type FileConflict } from '../../../shared/api.js';

const REMEMBER_KEY = 'ferry.duplicateAction';

/** What the person decided: an action for all files, and per file (by the source's path) where they chose so. */
export interface DuplicateDecision {
  action: DuplicateFileAction;
  choices?: Record<string, DuplicateFileAction>;
}

/**
 * The same decision with the most common per-file choice as the action for all and only the
 * other choices per file: what an upload's form field carries stays small (the server reads
 * 64 KiB of it). Files without a choice have nothing there, so the action for all is theirs alike.
 */
export function compacted(decision: DuplicateDecision): DuplicateDecision {
  const choices = Object.entries(decision.choices ?? {});
  if (choices.length === 0) return decision;
  const counts = new Map<DuplicateFileAction, number>();
  for (const [, action] of choices) counts.set(action, (counts.get(action) ?? 0) + 1);
  const action = [...counts].reduce((best, next) => (next[1] > best[1] ? next : best))[0];
  const others = choices.filter(([, chosen]) => chosen !== action);
  return others.length === 0 ? { action } : { action, choices: Object.fromEntries(others) };
}

/** The per-file view: the conflicts as they load, and the choice made for each. */
export type PerFileView =
  | { state: 'loading' }
  | { state: 'failed'; message: string }
  | { state: 'ready'; conflicts: FileConflict[]; choices: Record<string, DuplicateFileAction> };

export interface DuplicateQuestion {
  /** e.g. "3 items into OSF › Project › data" */
  description: string;
  /** whether "Choose per file…" is offered (the job takes per-file choices) */
  perFileOffered: boolean;
  /** set while the per-file view is open */
  perFile: PerFileView | null;
  answer(choice: { action: DuplicateFileAction; remember: boolean } | null): void;
}

export interface AskOptions {
  /** what is already there, for "Choose per file…"; absent: only one action for all */
  loadConflicts?: () => Promise<FileConflict[]>;
}

/** Each file starts with the choice it would get for all: skipping keeps what is there, the safe default. */
const FIRST_CHOICE: DuplicateFileAction = 'ignore';

export function createDuplicatePrompt(storage: Pick<Storage, 'getItem' | 'setItem' | 'removeItem'> | null) {
  const store = createStore<{ question: DuplicateQuestion | null }>()(() => ({ question: null }));
  /** settles the open question; null while none is open */
  let settle: ((decision: DuplicateDecision | null) => void) | null = null;
  let load: (() => Promise<FileConflict[]>) | null = null;

  function remembered(): DuplicateFileAction | null {
    const value = storage?.getItem(REMEMBER_KEY);
    return (DUPLICATE_FILE_ACTIONS as readonly (string | null | undefined)[]).includes(value) ? (value as DuplicateFileAction) : null;
  }

  function setPerFile(perFile: PerFileView | null): void {
    const question = store.getState().question;
    if (question) store.setState({ question: { ...question, perFile } });
  }

  function finish(decision: DuplicateDecision | null): void {
    store.setState({ question: null });
    const done = settle;
    settle = null;
    load = null;
    done?.(decision);
  }

  return {
    store,
    remembered,
    forget: () => storage?.removeItem(REMEMBER_KEY),
    /** resolves with the decision, or null when the user cancelled the job */
    ask(description: string, options: AskOptions = {}): Promise<DuplicateDecision | null> {
      const saved = remembered();
      if (saved) return Promise.resolve({ action: saved });
      // a question still open is answered "cancel": one dialog at a time
      finish(null);
      load = options.loadConflicts ?? null;
      return new Promise((resolve) => {
        settle = resolve;
        store.setState({
          question: {
            description,
            perFileOffered: load !== null,
            perFile: null,
            answer(choice) {
              if (choice?.remember) storage?.setItem(REMEMBER_KEY, choice.action);
              finish(choice ? { action: choice.action } : null);
            },
          },
        });
      });
    },
    /** "Choose per file…": loads what is already there, each file starting at FIRST_CHOICE. */
    async openPerFile(): Promise<void> {
      const loading = load;
      if (!loading) return;
      setPerFile({ state: 'loading' });
      try {
        const conflicts = await loading();
        // the question may have been answered or replaced meanwhile
        if (load !== loading) return;
        setPerFile({ state: 'ready', conflicts, choices: Object.fromEntries(conflicts.map((conflict) => [conflict.path, FIRST_CHOICE])) });
      } catch (error) {
        if (load !== loading) return;
        setPerFile({ state: 'failed', message: error instanceof Error ? error.message : String(error) });
      }
    },
    /** Back to one action for all. */
    closePerFile: () => setPerFile(null),
    /** The choice for one file (`path` as the conflicts name it), or for every file listed when `path` is null. */
    choose(path: string | null, action: DuplicateFileAction): void {
      const perFile = store.getState().question?.perFile;
      if (perFile?.state !== 'ready') return;
      const choices = path === null ? Object.fromEntries(perFile.conflicts.map((conflict) => [conflict.path, action])) : { ...perFile.choices, [path]: action };
      setPerFile({ ...perFile, choices });
    },
    /** Sends the job with the per-file choices; files not listed have nothing there, so the action for all does not matter to them. */
    submitPerFile(): void {
      const perFile = store.getState().question?.perFile;
      if (perFile?.state !== 'ready') return;
      finish({ action: FIRST_CHOICE, choices: { ...perFile.choices } });
    },
  };
}

export type DuplicatePrompt = ReturnType<typeof createDuplicatePrompt>;
