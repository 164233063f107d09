// "The destination may already hold these files — what then?" Asked once per job, unless
// the user ticked "remember my choice" (kept in localStorage; it is a preference, not a secret).
import { createStore } from 'zustand/vanilla';
import type { DuplicateFileAction } from '../../../shared/api.js';

const REMEMBER_KEY = 'ferry.duplicateAction';

export interface DuplicateQuestion {
  /** e.g. "3 items into OSF › Project › data" */
  description: string;
  answer(choice: { action: DuplicateFileAction; remember: boolean } | null): void;
}

export function createDuplicatePrompt(storage: Pick<Storage, 'getItem' | 'setItem' | 'removeItem'> | null) {
  const store = createStore<{ question: DuplicateQuestion | null }>()(() => ({ question: null }));

  function remembered(): DuplicateFileAction | null {
    const value = storage?.getItem(REMEMBER_KEY);
    return value === 'ignore' || value === 'update' ? value : null;
  }

  return {
    store,
    remembered,
    forget: () => storage?.removeItem(REMEMBER_KEY),
    /** resolves with the action, or null when the user cancelled the job */
    ask(description: string): Promise<DuplicateFileAction | null> {
      const saved = remembered();
      if (saved) return Promise.resolve(saved);
      return new Promise((resolve) => {
        store.setState({
          question: {
            description,
            answer(choice) {
              store.setState({ question: null });
              if (choice?.remember) storage?.setItem(REMEMBER_KEY, choice.action);
              resolve(choice ? choice.action : null);
            },
          },
        });
      });
    },
  };
}

export type DuplicatePrompt = ReturnType<typeof createDuplicatePrompt>;
