// The yes/no question of askConfirm (stores/ui.ts): what will happen, where, and whether it
// can be taken back. Cancel is focused first, so Enter alone never confirms a delete.
import { useStore } from 'zustand';
import type { UiStore } from '../stores/ui.js';
import { Dialog } from './Dialog.js';

export function ConfirmDialog({ ui }: { ui: UiStore }) {
  const question = useStore(ui, (s) => s.confirmation);
  if (!question) return null;
  return (
    <Dialog title={question.title} onCancel={() => question.answer(false)}>
      <p>{question.text}</p>
      <div className="dialog-buttons">
        <button type="button" onClick={() => question.answer(false)}>
          Cancel
        </button>
        <button type="button" className={question.danger ? 'danger' : 'primary'} onClick={() => question.answer(true)}>
          {question.confirm}
        </button>
      </div>
    </Dialog>
  );
}
