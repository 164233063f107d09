import { useState } from 'react';
import { useStore } from 'zustand';
import type { UiStore } from '../stores/ui.js';
import { Dialog } from './Dialog.js';

export function TextDialog({ ui }: { ui: UiStore }) {
  const question = useStore(ui, (s) => s.question);
  if (!question) return null;
  return <TextDialogBody key={question.title + question.initial} question={question} />;
}

function TextDialogBody({ question }: { question: NonNullable<ReturnType<UiStore['getState']>['question']> }) {
  const [value, setValue] = useState(question.initial);
  return (
    <Dialog title={question.title} onCancel={() => question.answer(null)}>
      <form
        onSubmit={(event) => {
          event.preventDefault();
          question.answer(value);
        }}
      >
        <label className="field">
          <span>{question.label}</span>
          <input value={value} onChange={(event) => setValue(event.target.value)} onFocus={(e) => e.target.select()} />
        </label>
        <div className="dialog-buttons">
          <button type="button" onClick={() => question.answer(null)}>
            Cancel
          </button>
          <button type="submit" disabled={value.trim() === ''}>
            {question.confirm}
          </button>
        </div>
      </form>
    </Dialog>
  );
}
