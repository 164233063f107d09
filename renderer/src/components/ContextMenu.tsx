// The rows' context menu (right-click, Shift+F10, the Menu key): the pane's row commands as an
// ARIA menu. Focus moves to the first enabled item; arrows, Home and End move; Enter runs;
// Escape, Tab or a click elsewhere closes it and gives focus back to where it was.
import { useEffect, useRef, type KeyboardEvent } from 'react';
import { Icon } from './icons.js';
import { shortcutText, type PaneCommand, type PaneCommandId } from './pane-commands.js';

export interface MenuPosition {
  x: number;
  y: number;
}

export function ContextMenu(props: {
  label: string;
  at: MenuPosition;
  commands: readonly PaneCommand[];
  run(id: PaneCommandId): void;
  close(): void;
}) {
  const ref = useRef<HTMLDivElement>(null);
  const items = () => Array.from(ref.current?.querySelectorAll<HTMLButtonElement>('[role="menuitem"]:not(:disabled)') ?? []);

  useEffect(() => {
    const previous = document.activeElement as HTMLElement | null;
    // after the event that opened it has settled (a right-click's own focus handling comes later on some systems)
    const timer = setTimeout(() => items()[0]?.focus(), 0);
    const outside = (event: PointerEvent) => {
      if (!ref.current?.contains(event.target as Node)) props.close();
    };
    document.addEventListener('pointerdown', outside, true);
    return () => {
      clearTimeout(timer);
      document.removeEventListener('pointerdown', outside, true);
      previous?.focus?.();
    };
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, []);

  function onKeyDown(event: KeyboardEvent): void {
    const list = items();
    const index = list.indexOf(document.activeElement as HTMLButtonElement);
    const go = (i: number) => list[(i + list.length) % list.length]?.focus();
    switch (event.key) {
      case 'ArrowDown':
        go(index + 1);
        break;
      case 'ArrowUp':
        go(index - 1);
        break;
      case 'Home':
        go(0);
        break;
      case 'End':
        go(list.length - 1);
        break;
      case 'Escape':
      case 'Tab':
        props.close();
        break;
      default:
        return;
    }
    event.preventDefault();
    event.stopPropagation();
  }

  // kept inside the window: a menu opened near the right or bottom edge opens towards the middle
  const left = Math.min(props.at.x, window.innerWidth - 240);
  const top = Math.min(props.at.y, window.innerHeight - 40 - props.commands.length * 30);
  return (
    <div ref={ref} className="context-menu" role="menu" aria-label={props.label} style={{ left: Math.max(0, left), top: Math.max(0, top) }} onKeyDown={onKeyDown}>
      {props.commands.map((command) => (
        <button
          key={command.id}
          type="button"
          role="menuitem"
          disabled={!command.enabled}
          aria-keyshortcuts={command.shortcut}
          onClick={() => {
            props.close();
            props.run(command.id);
          }}
        >
          <Icon name={command.icon} />
          <span className="menu-label">{command.label}</span>
          <span className="menu-shortcut" aria-hidden="true">
            {shortcutText(command.shortcut)}
          </span>
        </button>
      ))}
    </div>
  );
}
