// The metadata review before a new top-level record in a repository: the fields the new
// record will be described with, as the source's metadata gives them, editable. Going ahead
// answers the reviewed fields; the caller sends them with the transfer (actions.ts).
import { useState } from 'react';
import { useStore } from 'zustand';
import { sameMetadata, type ReviewedMetadata } from '../metadata.js';
import { useServices } from '../services.js';
import type { MetadataQuestion } from '../stores/ui.js';
import { Dialog } from './Dialog.js';

const FIELDS: { key: keyof ReviewedMetadata; label: string; lines?: number; type?: 'date'; help?: string }[] = [
  { key: 'title', label: 'Title' },
  { key: 'description', label: 'Description', lines: 3 },
  { key: 'creators', label: 'Creators', lines: 2, help: 'One per line.' },
  { key: 'keywords', label: 'Keywords', help: 'Separated by commas.' },
  { key: 'license', label: 'Licence', help: 'An SPDX identifier such as CC-BY-4.0.' },
  { key: 'publication_date', label: 'Publication date', type: 'date' },
];

export function MetadataReviewDialog() {
  const { ui } = useServices();
  const question = useStore(ui, (s) => s.metadataReview);
  if (!question) return null;
  return <Review key={question.target + question.metadata.title} question={question} />;
}

function Review({ question }: { question: MetadataQuestion }) {
  const [values, setValues] = useState(question.metadata);
  const edited = !sameMetadata(values, question.metadata);

  return (
    <Dialog title="Review the metadata" className="metadata-review" onCancel={() => question.answer(null)}>
      <p className="hint">
        A new record is made in {question.where}. These fields come from the source where it says them; an empty one is not known and is
        left out.
        {question.passedThrough.length > 0 ? ` Its ${question.passedThrough.join(' and ')} go as the source gives them.` : ''}
      </p>
      {question.readError ? (
        <p className="message error" role="alert">
          The source&apos;s metadata could not be read: {question.readError} Fill in what the record should say, or cancel.
        </p>
      ) : null}
      <form
        onSubmit={(event) => {
          event.preventDefault();
          question.answer(values);
        }}
      >
        {FIELDS.map((field) => {
          const common = {
            id: `metadata-${field.key}`,
            value: values[field.key],
            'aria-describedby': field.help ? `metadata-${field.key}-help` : undefined,
            onChange: (event: { target: { value: string } }) => setValues((v) => ({ ...v, [field.key]: event.target.value })),
          };
          return (
            <div className="field" key={field.key}>
              <label htmlFor={common.id}>{field.label}</label>
              {field.lines ? <textarea rows={field.lines} {...common} /> : <input type={field.type ?? 'text'} {...common} />}
              {field.help ? (
                <span className="hint" id={`metadata-${field.key}-help`}>
                  {field.help}
                </span>
              ) : null}
            </div>
          );
        })}
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
