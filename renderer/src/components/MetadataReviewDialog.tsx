// The metadata review before a new top-level upload or transfer into a repository: the fields
// the new record will be described with, as the source's detail gives them, editable. Going
// ahead with edits sends them through api.submitMetadata (see there: not available until the
// metadata contract exists, and then it says so rather than dropping the edits).
import { useState } from 'react';
import { useStore } from 'zustand';
import { messageOf } from '../api/client.js';
import { sameMetadata, type ReviewedMetadata } from '../metadata.js';
import { useServices } from '../services.js';
import type { MetadataQuestion } from '../stores/ui.js';
import { Dialog } from './Dialog.js';

const FIELDS: { key: keyof ReviewedMetadata; label: string; lines?: number; help?: string }[] = [
  { key: 'title', label: 'Title' },
  { key: 'description', label: 'Description', lines: 3 },
  { key: 'creators', label: 'Creators', lines: 2, help: 'One per line.' },
  { key: 'keywords', label: 'Keywords', help: 'Separated by commas.' },
  { key: 'license', label: 'Licence', help: 'An SPDX identifier such as CC-BY-4.0.' },
];

export function MetadataReviewDialog() {
  const { ui } = useServices();
  const question = useStore(ui, (s) => s.metadataReview);
  if (!question) return null;
  return <Review key={question.target + question.metadata.title} question={question} />;
}

function Review({ question }: { question: MetadataQuestion }) {
  const { api } = useServices();
  const [values, setValues] = useState(question.metadata);
  const [problem, setProblem] = useState<string | null>(null);
  const edited = !sameMetadata(values, question.metadata);

  async function goAhead(): Promise<void> {
    if (!edited) return question.answer(question.metadata);
    try {
      await api.submitMetadata(question.target, { ...values });
      question.answer(values);
    } catch (error) {
      setProblem(messageOf(error));
    }
  }

  return (
    <Dialog title="Review the metadata" className="metadata-review" onCancel={() => question.answer(null)}>
      <p className="hint">
        A new record is made in {question.where}. These fields come from the source where it says them; an empty one is not known and is
        left out.
      </p>
      <form
        onSubmit={(event) => {
          event.preventDefault();
          void goAhead();
        }}
      >
        {FIELDS.map((field) => (
          <div className="field" key={field.key}>
            <label htmlFor={`metadata-${field.key}`}>{field.label}</label>
            {field.lines ? (
              <textarea
                id={`metadata-${field.key}`}
                rows={field.lines}
                value={values[field.key]}
                aria-describedby={field.help ? `metadata-${field.key}-help` : undefined}
                onChange={(event) => setValues((v) => ({ ...v, [field.key]: event.target.value }))}
              />
            ) : (
              <input
                id={`metadata-${field.key}`}
                value={values[field.key]}
                aria-describedby={field.help ? `metadata-${field.key}-help` : undefined}
                onChange={(event) => setValues((v) => ({ ...v, [field.key]: event.target.value }))}
              />
            )}
            {field.help ? (
              <span className="hint" id={`metadata-${field.key}-help`}>
                {field.help}
              </span>
            ) : null}
          </div>
        ))}
        {problem ? (
          <p className="message error" role="alert">
            {problem}
          </p>
        ) : null}
        <div className="dialog-buttons">
          {edited ? (
            <button type="button" onClick={() => setValues(question.metadata)}>
              Undo edits
            </button>
          ) : null}
          <button type="button" onClick={() => question.answer(null)}>
            Cancel
          </button>
          <button type="submit" className="primary">
            Go ahead
          </button>
        </div>
      </form>
    </Dialog>
  );
}
