// "Keep folders as": asked before an upload or transfer with subfolders goes to a destination
// whose records keep no folders (Zenodo, InvenioRDM, figshare: its capabilities.folder_modes).
// The choice is sent as the API's folder mode; the last one for a destination is preselected.
import { useState } from 'react';
import { useStore } from 'zustand';
import type { FolderMode } from '../../../shared/api.js';
import type { FolderModeQuestion, UiStore } from '../stores/ui.js';
import { Dialog } from './Dialog.js';

export const FOLDER_MODE_LABELS: Record<FolderMode, { label: string; hint: string }> = {
  flatten: { label: 'Flattened names', hint: 'raw/run1.csv is stored as raw__run1.csv' },
  'zip-per-folder': { label: 'One ZIP per folder', hint: 'each folder is stored as raw.zip, files beside them stay files' },
  bag: { label: 'One BagIt ZIP', hint: 'everything in one bag, with its checksums' },
};

export function FolderModeDialog({ ui }: { ui: UiStore }) {
  const question = useStore(ui, (s) => s.folderMode);
  if (!question) return null;
  return <FolderModeBody key={question.where} question={question} />;
}

function FolderModeBody({ question }: { question: FolderModeQuestion }) {
  const [mode, setMode] = useState<FolderMode>(question.initial);
  return (
    <Dialog title="Keep folders as" onCancel={() => question.answer(null)} className="folder-mode">
      <form
        onSubmit={(event) => {
          event.preventDefault();
          question.answer(mode);
        }}
      >
        <p>
          {question.where} keeps no folders, and what you are sending has some. Ferry records how they were kept, so it can put the
          folders back when you bring the files back.
        </p>
        <fieldset>
          <legend>Keep folders as</legend>
          {question.modes.map((option) => (
            <label key={option} className="choice">
              <input type="radio" name="folder-mode" value={option} checked={mode === option} onChange={() => setMode(option)} />
              <span>
                {FOLDER_MODE_LABELS[option].label}
                <span className="hint"> — {FOLDER_MODE_LABELS[option].hint}</span>
              </span>
            </label>
          ))}
        </fieldset>
        <div className="dialog-buttons">
          <button type="button" onClick={() => question.answer(null)}>
            Cancel
          </button>
          <button type="submit" className="primary">
            Continue
          </button>
        </div>
      </form>
    </Dialog>
  );
}
