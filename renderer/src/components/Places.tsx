// The places sidebar, shared by both panes as in Dolphin's or Finder's split view: a place
// opens in the active pane (the header says which), and the place that pane shows is marked
// as the current location. One Tab stop (the current place), arrows move between places and
// Enter opens one, as in a desktop sidebar; nothing is reachable only by mouse.
import type { KeyboardEvent } from 'react';
import { useStore } from 'zustand';
import { placeGroups } from '../places.js';
import { useServices } from '../services.js';
import { Icon } from './icons.js';
import { focusPane } from './Pane.js';

export function Places() {
  const { ui, session, localRoots, panes } = useServices();
  const active = useStore(ui, (s) => s.active);
  const current = useStore(panes[active], (s) => s.target);
  const targets = useStore(session.store, (s) => s.targets);
  const sessionTargets = useStore(session.store, (s) => s.session?.targets);
  const answer = useStore(localRoots.store, (s) => s.answer);
  const paths: Record<string, string> = {};
  if (answer) {
    paths.local = answer.workspace;
    for (const root of answer.roots) paths[root.name] = root.path;
  }
  const groups = placeGroups(targets, sessionTargets ?? [], paths);
  const tabStop = groups.some((g) => g.places.some((p) => p.target === current)) ? current : groups[0]?.places[0]?.target;

  function onKeyDown(event: KeyboardEvent<HTMLElement>) {
    if (!['ArrowDown', 'ArrowUp', 'Home', 'End'].includes(event.key)) return;
    const buttons = [...event.currentTarget.querySelectorAll<HTMLButtonElement>('button.place')];
    const at = buttons.indexOf(document.activeElement as HTMLButtonElement);
    if (at === -1) return;
    event.preventDefault();
    const next = event.key === 'Home' ? 0 : event.key === 'End' ? buttons.length - 1 : Math.min(buttons.length - 1, Math.max(0, at + (event.key === 'ArrowDown' ? 1 : -1)));
    buttons[next]?.focus();
  }

  return (
    <nav className="places" aria-label="Places" onKeyDown={onKeyDown}>
      <p className="places-into hint" aria-live="polite">
        Opens in the {active} pane
      </p>
      <span id="place-needs-account" hidden>
        No account stored yet; browsing asks for one.
      </span>
      {groups.map((group) => (
        <section key={group.title} aria-label={group.title}>
          <h2>{group.title}</h2>
          <ul>
            {group.places.map((place) => (
              <li key={place.target}>
                <button
                  type="button"
                  className="place"
                  aria-label={place.label}
                  aria-current={place.target === current ? 'location' : undefined}
                  tabIndex={place.target === tabStop ? 0 : -1}
                  aria-describedby={place.needsAccount ? 'place-needs-account' : undefined}
                  title={place.path ? `${place.label} — ${place.path}` : place.label}
                  onClick={() => {
                    void panes[active].getState().setTarget(place.target);
                    focusPane(active);
                  }}
                >
                  <Icon name={place.icon} />
                  <span className="place-label">{place.label}</span>
                  {place.needsAccount ? <span className="place-badge" aria-hidden="true" title="No account stored yet" /> : null}
                </button>
              </li>
            ))}
          </ul>
          {group.places.some((p) => p.needsAccount) ? (
            <p className="hint places-legend" aria-hidden="true">
              <span className="place-badge" /> no account yet
            </p>
          ) : null}
          {group.title === 'This computer' ? (
            <button type="button" className="place place-action" tabIndex={-1} onClick={() => ui.setState({ localFoldersOpen: true })}>
              <Icon name="plus" />
              <span className="place-label">Add or manage folders…</span>
            </button>
          ) : null}
        </section>
      ))}
    </nav>
  );
}
