// Asked once per job when the destination may already hold some of the files.
import { useState } from 'react';
import { useStore } from 'zustand';
import type { DuplicatePrompt } from '../stores/duplicates.js';
import { Dialog } from './Dialog.js';

export function DuplicateDialog({ prompt }: { prompt: DuplicatePrompt }) {
  const question = useStore(prompt.store, (s) => s.question);
  const [remember, setRemember] = useState(false);
  if (!question) return null;
  return (
    <Dialog title="Some files may already be there" onCancel={() => question.answer(null)}>
      <p>
        Copying {question.description}. What should happen to files that already exist there?
      </p>
      <div className="dialog-choices">
        <button type="button" onClick={() => question.answer({ action: 'ignore', remember })}>
          Skip existing files
        </button>
        <button type="button" onClick={() => question.answer({ action: 'update', remember })}>
          Replace changed files
        </button>
      </div>
      <p className="hint">Replacing only touches files whose content differs; identical files are left alone.</p>
      <label>
        <input type="checkbox" checked={remember} onChange={(event) => setRemember(event.target.checked)} />
        Remember my choice
      </label>
      <div className="dialog-buttons">
        <button type="button" onClick={() => question.answer(null)}>
          Cancel
        </button>
      </div>
    </Dialog>
  );
}
