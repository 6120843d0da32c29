import { useRef, useSyncExternalStore, type KeyboardEvent } from "react";

/**
 * Below this width (CSS px) the three columns (sessions, chat, inspector) become one panel at a
 * time behind a tab bar. `styles.css` uses the same number in its `@media (max-width: 720px)`.
 */
export const NARROW_QUERY = "(max-width: 720px)";

const narrowQuery = typeof matchMedia === "function" ? matchMedia(NARROW_QUERY) : null;

/** Whether the viewport is narrow (the tabbed layout), following resizes and rotations. */
export function useNarrow(): boolean {
  return useSyncExternalStore(
    (changed) => {
      narrowQuery?.addEventListener("change", changed);
      return () => narrowQuery?.removeEventListener("change", changed);
    },
    () => narrowQuery?.matches ?? false,
  );
}

export type PanelName = "sessions" | "chat" | "inspector";

export interface Layout {
  narrow: boolean;
  /** The panel shown in the narrow layout (every panel shows in the wide one). */
  active: PanelName;
}

/**
 * The attributes of one panel: in the narrow layout a `tabpanel` labelled by its tab, `hidden`
 * unless active (hidden panels stay mounted, so a stream, a draft or the timeline keep running).
 */
export function panelProps(layout: Layout, name: PanelName) {
  if (!layout.narrow) return { id: `panel-${name}` };
  return { id: `panel-${name}`, role: "tabpanel", "aria-labelledby": `tab-${name}`, hidden: layout.active !== name };
}

export interface TabSpec {
  name: PanelName;
  label: string;
  /** Actions waiting in this panel: shown as a count, read as "N waiting". */
  waiting?: number;
}

/**
 * The tab bar of the narrow layout (WAI-ARIA tabs pattern: one tab stop, arrow keys, Home/End
 * move and select).
 */
export function PanelTabs({ tabs, active, onSelect }: { tabs: readonly TabSpec[]; active: PanelName; onSelect: (name: PanelName) => void }) {
  const refs = useRef(new Map<PanelName, HTMLButtonElement>());
  const onKeyDown = (e: KeyboardEvent) => {
    // From the focused tab, not from `active`: keys pressed faster than React re-renders must
    // each move on from where the previous one went.
    const i = tabs.findIndex((t) => refs.current.get(t.name) === e.target);
    const to = e.key === "ArrowRight" ? i + 1 : e.key === "ArrowLeft" ? i - 1 : e.key === "Home" ? 0 : e.key === "End" ? tabs.length - 1 : null;
    if (to === null) return;
    e.preventDefault();
    const next = tabs[(to + tabs.length) % tabs.length];
    if (next) {
      refs.current.get(next.name)?.focus();
      onSelect(next.name);
    }
  };
  return (
    <div className="panel-tabs" role="tablist" aria-label="Panels" onKeyDown={onKeyDown}>
        {tabs.map((t) => (
          <button
            key={t.name}
            ref={(el) => {
              if (el) refs.current.set(t.name, el);
              else refs.current.delete(t.name);
            }}
            type="button"
            role="tab"
            id={`tab-${t.name}`}
            aria-controls={`panel-${t.name}`}
            aria-selected={t.name === active}
            tabIndex={t.name === active ? 0 : -1}
            data-testid={`tab-${t.name}`}
            onClick={() => onSelect(t.name)}
          >
            {t.label}
            {!!t.waiting && (
              <span className="tab-count" data-testid={`tab-${t.name}-waiting`}>
                {t.waiting}
                <span className="sr-only"> waiting</span>
              </span>
            )}
          </button>
        ))}
    </div>
  );
}
