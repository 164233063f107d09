// A small modal: labelled, focus moved inside on open, Escape cancels.
import { useEffect, useId, useRef, type ReactNode } from 'react';

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
          }
        }}
      >
        <h2 id={id}>{props.title}</h2>
        {props.children}
      </div>
    </div>
  );
}
