// Asked once per job when the destination may already hold some of the files: one action for
// all of them, or (a transfer or an upload into a folder) "Choose per file…" over what is already there,
// both sides' size, date and hash side by side.
import { useState } from 'react';
import { useStore } from 'zustand';
import { DUPLICATE_FILE_ACTIONS, type DuplicateFileAction, type FileConflict, type FileFacts } from '../../../shared/api.js';
import { formatBytes, formatDate } from '../format.js';
import type { DuplicatePrompt, PerFileView } from '../stores/duplicates.js';
import { Dialog } from './Dialog.js';

/** The actions as Cyberduck names them, in the order offered. */
export const ACTION_LABELS: Record<DuplicateFileAction, string> = {
  ignore: 'Skip',
  update: 'Replace if different',
  newer: 'Replace if newer',
  rename: 'Keep both',
};

const ACTION_HINTS: Record<DuplicateFileAction, string> = {
  ignore: 'leaves the file that is there',
  update: 'replaces it only when the content differs',
  newer: 'replaces it only when this copy was changed later',
  rename: 'writes this copy as “name (2)”',
};

export function DuplicateDialog({ prompt }: { prompt: DuplicatePrompt }) {
  const question = useStore(prompt.store, (s) => s.question);
  const [remember, setRemember] = useState(false);
  if (!question) return null;
  if (question.perFile) return <PerFileDialog prompt={prompt} view={question.perFile} onCancel={() => question.answer(null)} />;
  return (
    <Dialog title="Some files may already be there" onCancel={() => question.answer(null)}>
      <p>
        Copying {question.description}. What should happen to files that already exist there?
      </p>
      <div className="dialog-choices" role="group" aria-label="For all files">
        {DUPLICATE_FILE_ACTIONS.map((action) => (
          <button key={action} type="button" onClick={() => question.answer({ action, remember })}>
            {ACTION_LABELS[action]}
          </button>
        ))}
      </div>
      <ul className="hint duplicate-hints">
        {DUPLICATE_FILE_ACTIONS.map((action) => (
          <li key={action}>
            {ACTION_LABELS[action]}: {ACTION_HINTS[action]}.
          </li>
        ))}
      </ul>
      <label>
        <input type="checkbox" checked={remember} onChange={(event) => setRemember(event.target.checked)} />
        Remember my choice
      </label>
      <div className="dialog-buttons">
        {question.perFileOffered && (
          <button type="button" onClick={() => void prompt.openPerFile()}>
            Choose per file…
          </button>
        )}
        <button type="button" onClick={() => question.answer(null)}>
          Cancel
        </button>
      </div>
    </Dialog>
  );
}

function PerFileDialog({ prompt, view, onCancel }: { prompt: DuplicatePrompt; view: PerFileView; onCancel(): void }) {
  return (
    <Dialog title="Choose per file" onCancel={onCancel} className="duplicates-per-file">
      {view.state === 'loading' && <p role="status">Looking at what is already there…</p>}
      {view.state === 'failed' && <p role="alert">Ferry could not list what is already there: {view.message}</p>}
      {view.state === 'ready' && view.conflicts.length === 0 && <p role="status">None of these files is there yet: nothing will be replaced.</p>}
      {view.state === 'ready' && view.conflicts.length > 0 && (
        <>
          <label className="set-all">
            Set all to{' '}
            <select value="" onChange={(event) => event.target.value && prompt.choose(null, event.target.value as DuplicateFileAction)}>
              <option value="">…</option>
              {DUPLICATE_FILE_ACTIONS.map((action) => (
                <option key={action} value={action}>
                  {ACTION_LABELS[action]}
                </option>
              ))}
            </select>
          </label>
          <div className="conflicts-scroll">
            <table className="conflicts">
              <caption>
                {view.conflicts.length} file{view.conflicts.length === 1 ? ' is' : 's are'} already there
              </caption>
              <thead>
                <tr>
                  <th scope="col">File</th>
                  <th scope="col">This copy</th>
                  <th scope="col">Already there</th>
                  <th scope="col">Action</th>
                </tr>
              </thead>
              <tbody>
                {view.conflicts.map((conflict) => (
                  <ConflictRow key={conflict.path} conflict={conflict} choice={view.choices[conflict.path]!} onChoose={(action) => prompt.choose(conflict.path, action)} />
                ))}
              </tbody>
            </table>
          </div>
        </>
      )}
      <div className="dialog-buttons">
        <button type="button" onClick={prompt.closePerFile}>
          Back
        </button>
        <button type="button" onClick={onCancel}>
          Cancel
        </button>
        <button type="button" className="primary" disabled={view.state !== 'ready'} onClick={prompt.submitPerFile}>
          Copy with these choices
        </button>
      </div>
    </Dialog>
  );
}

function ConflictRow({ conflict, choice, onChoose }: { conflict: FileConflict; choice: DuplicateFileAction; onChoose(action: DuplicateFileAction): void }) {
  const newer = newerSide(conflict);
  const algorithm = sharedAlgorithm(conflict);
  const same = algorithm !== null && conflict.source.hashes[algorithm] === conflict.destination?.hashes[algorithm];
  return (
    <tr>
      <th scope="row" className="conflict-name">
        {conflict.destination_path}
      </th>
      <td>
        <Facts facts={conflict.source} newer={newer === 'source'} algorithm={algorithm} />
      </td>
      <td>
        {conflict.destination ? <Facts facts={conflict.destination} newer={newer === 'destination'} algorithm={algorithm} same={same} /> : 'a folder of that name'}
      </td>
      <td>
        <select aria-label={`Action for ${conflict.destination_path}`} value={choice} onChange={(event) => onChoose(event.target.value as DuplicateFileAction)}>
          {DUPLICATE_FILE_ACTIONS.map((action) => (
            <option key={action} value={action}>
              {ACTION_LABELS[action]}
            </option>
          ))}
        </select>
      </td>
    </tr>
  );
}

/** `algorithm`: the hash both sides report, shown on both so they can be compared; `same`: their values match. */
function Facts({ facts, newer, algorithm, same = false }: { facts: FileFacts; newer: boolean; algorithm: string | null; same?: boolean }) {
  const hash = algorithm !== null && facts.hashes[algorithm] ? ([algorithm, facts.hashes[algorithm]] as const) : Object.entries(facts.hashes)[0];
  return (
    <div className="facts">
      <span>{formatBytes(facts.size)}</span>
      <span>
        {formatDate(facts.date_modified)}
        {newer && <strong> (newer)</strong>}
      </span>
      <span className="hash" title={hash ? `${hash[0]} ${hash[1]}` : undefined}>
        {hash ? `${hash[0]} ${hash[1].slice(0, 12)}…` : 'no hash known'}
        {same && <strong> (same content)</strong>}
      </span>
    </div>
  );
}

/** A hash algorithm both sides report (the first the source has), or null. */
export function sharedAlgorithm(conflict: FileConflict): string | null {
  const stored = conflict.destination?.hashes ?? {};
  return Object.keys(conflict.source.hashes).find((algorithm) => stored[algorithm] !== undefined) ?? null;
}

/** Which side was modified later, when both dates are known. */
export function newerSide(conflict: FileConflict): 'source' | 'destination' | null {
  const source = Date.parse(conflict.source.date_modified ?? '');
  const stored = Date.parse(conflict.destination?.date_modified ?? '');
  if (Number.isNaN(source) || Number.isNaN(stored) || source === stored) return null;
  return source > stored ? 'source' : 'destination';
}
