// Where a pane is, and how to move: Back, Forward and Up buttons, then the breadcrumbs. A
// click on the empty part of the bar, or Ctrl+L in the pane, turns the crumbs into a text
// field holding the path ("/project/raw"); Enter goes there, Escape puts the crumbs back. A
// path that does not resolve says which part is missing and keeps the field open to fix it.
import { useEffect, useRef, useState } from 'react';
import { useStore } from 'zustand';
import { useServices } from '../services.js';
import type { PaneSide } from '../stores/pane.js';
import { pathText, resolvePath } from '../stores/path.js';
import { Icon } from './icons.js';

/** `editRequests` ticks when the pane asks for the field (Ctrl+L); `done` runs after a move or Escape. */
export function PathBar({ side, editRequests, done }: { side: PaneSide; editRequests: number; done(): void }) {
  const services = useServices();
  const pane = services.panes[side];
  const target = useStore(pane, (s) => s.target);
  const trail = useStore(pane, (s) => s.trail);
  const canBack = useStore(pane, (s) => s.back.length > 0);
  const canForward = useStore(pane, (s) => s.forward.length > 0);
  const targets = useStore(services.session.store, (s) => s.targets);
  const targetName = targets.find((t) => t.name === target)?.readable_name ?? target ?? '—';
  const [text, setText] = useState('');
  const [problem, setProblem] = useState<string | null>(null);
  const [resolving, setResolving] = useState(false);
  const field = useRef<HTMLInputElement>(null);
  const [editing, setEditing] = useState(false);

  const startEditing = () => {
    if (!target) return;
    setText(pathText(trail));
    setProblem(null);
    setEditing(true);
  };

  useEffect(() => {
    if (editRequests > 0) startEditing();
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [editRequests]);

  async function go(): Promise<void> {
    if (!target) return;
    setResolving(true);
    const resolved = await resolvePath(services.api, target, targetName, text);
    setResolving(false);
    if ('error' in resolved) {
      setProblem(resolved.error);
      field.current?.focus();
      return;
    }
    setEditing(false);
    setProblem(null);
    await pane.getState().setTarget(target, resolved.trail);
    done();
  }

  return (
    <div className="path-bar">
      <div className="history-buttons" role="group" aria-label="Go">
        <button type="button" aria-label="Back" title="Back (Alt+Left)" disabled={!canBack} onClick={() => void pane.getState().goBack()}>
          <Icon name="back" />
        </button>
        <button
          type="button"
          aria-label="Forward"
          title="Forward (Alt+Right)"
          disabled={!canForward}
          onClick={() => void pane.getState().goForward()}
        >
          <Icon name="forward" />
        </button>
        <button type="button" aria-label="Up" title="Up one folder (Alt+Up, Backspace)" disabled={trail.length === 0} onClick={() => void pane.getState().up()}>
          <Icon name="up" />
        </button>
      </div>
      {editing ? (
        <form
          className="path-form"
          onSubmit={(event) => {
            event.preventDefault();
            void go();
          }}
        >
          <input
            ref={field}
            autoFocus
            className="path-field"
            aria-label={`Path in ${targetName}`}
            aria-invalid={problem !== null}
            value={text}
            disabled={resolving}
            onChange={(event) => setText(event.target.value)}
            onKeyDown={(event) => {
              if (event.key === 'Escape') {
                event.preventDefault();
                event.stopPropagation();
                setEditing(false);
                setProblem(null);
                done();
              }
            }}
          />
          {problem ? (
            <span className="path-problem" role="alert">
              {problem}
            </span>
          ) : null}
        </form>
      ) : (
        <nav className="breadcrumbs" aria-label={`${side === 'left' ? 'Left' : 'Right'} pane location`} onClick={(event) => event.target === event.currentTarget && startEditing()}>
          <ol onClick={(event) => event.target === event.currentTarget && startEditing()}>
            <li>
              <button type="button" disabled={!target} onClick={() => void pane.getState().goToCrumb(-1)}>
                {targetName}
              </button>
            </li>
            {trail.map((crumb, index) => (
              <li key={crumb.id}>
                <span aria-hidden="true">›</span>
                <button
                  type="button"
                  aria-current={index === trail.length - 1 ? 'location' : undefined}
                  onClick={() => void pane.getState().goToCrumb(index)}
                >
                  {crumb.title}
                </button>
              </li>
            ))}
          </ol>
          <button type="button" className="edit-path" aria-label="Edit path" title="Type a path (Ctrl+L)" disabled={!target} onClick={startEditing}>
            ✎
          </button>
        </nav>
      )}
    </div>
  );
}
