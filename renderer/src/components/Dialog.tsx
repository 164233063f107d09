// A small modal: labelled, focus moved inside on open and kept inside (Tab and Shift+Tab wrap
// around its controls, so keyboard focus never wanders behind the backdrop), Escape cancels,
// and focus goes back to where it was when it closes.
import { useEffect, useId, useRef, type ReactNode } from 'react';

const FOCUSABLE = 'input:not([disabled]):not([type="hidden"]), button:not([disabled]), select:not([disabled]), textarea:not([disabled]), a[href], [tabindex]:not([tabindex="-1"])';

export function Dialog(props: { title: string; onCancel(): void; children: ReactNode; className?: string }) {
  const id = useId();
  const ref = useRef<HTMLDivElement>(null);
  useEffect(() => {
    const previous = document.activeElement as HTMLElement | null;
    const first = ref.current?.querySelector<HTMLElement>('input, button, select, textarea');
    first?.focus();
    return () => previous?.focus?.();
  }, []);
  return (
    <div className="backdrop">
      <div
        ref={ref}
        role="dialog"
        aria-modal="true"
        aria-labelledby={id}
        className={`dialog ${props.className ?? ''}`}
        onKeyDown={(event) => {
          if (event.key === 'Escape') {
            event.stopPropagation();
            props.onCancel();
            return;
          }
          if (event.key !== 'Tab') return;
          const controls = Array.from(ref.current?.querySelectorAll<HTMLElement>(FOCUSABLE) ?? []).filter((element) => !element.hidden);
          if (controls.length === 0) return;
          const first = controls[0]!;
          const last = controls.at(-1)!;
          const active = document.activeElement;
          if (event.shiftKey && (active === first || !ref.current?.contains(active))) {
            event.preventDefault();
            last.focus();
          } else if (!event.shiftKey && (active === last || !ref.current?.contains(active))) {
            event.preventDefault();
            first.focus();
          }
        }}
      >
        <h2 id={id}>{props.title}</h2>
        {props.children}
      </div>
    </div>
  );
}
