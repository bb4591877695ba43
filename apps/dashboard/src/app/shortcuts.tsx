import { createContext, type ReactNode, useContext, useEffect, useId, useMemo, useRef, useState } from 'react';

/**
 * Keyboard shortcuts. Components declare theirs with `useShortcut` while they are mounted, and only
 * while the action applies, so the help overlay (`?`) lists exactly what works on the page at hand.
 * Keys are `event.key` values; two separated by a space are a sequence (`g r`). Nothing fires while
 * the operator types in a field, holds Ctrl, Alt or Meta, or has a dialog open.
 */

export interface ShortcutSpec {
  /** `/`, `?`, `s`, or a sequence `g r`. */
  keys: string;
  /** What it does, for the help overlay: "Go to the runs". */
  label: string;
  /** The heading it is listed under. */
  group: string;
}

interface Entry extends ShortcutSpec {
  id: string;
  /** A page's own binding wins over a global one of the same keys (`/` on the runs page). */
  global: boolean;
  run: () => void;
}

interface Registry {
  register: (entry: Entry) => () => void;
  entries: () => Entry[];
  help: { open: boolean; toggle: () => void; close: () => void };
}

const ShortcutsContext = createContext<Registry | null>(null);

/** How long the second key of a sequence may wait for the first. */
const SEQUENCE_MS = 1_500;

export function ShortcutsProvider({ children }: { children: ReactNode }) {
  const entries = useRef(new Map<string, Entry>());
  const [helpOpen, setHelpOpen] = useState(false);
  // Stable across renders: a component's binding is registered once, not again when the overlay opens.
  const bindings = useMemo(
    () => ({
      register: (entry: Entry) => {
        entries.current.set(entry.id, entry);
        return () => void entries.current.delete(entry.id);
      },
      entries: () => [...entries.current.values()],
    }),
    [],
  );
  const registry = useMemo<Registry>(
    () => ({ ...bindings, help: { open: helpOpen, toggle: () => setHelpOpen((open) => !open), close: () => setHelpOpen(false) } }),
    [bindings, helpOpen],
  );

  useEffect(() => {
    let prefix: { key: string; at: number } | null = null;
    const onKeyDown = (event: KeyboardEvent) => {
      if (event.defaultPrevented || event.repeat || event.isComposing || event.ctrlKey || event.metaKey || event.altKey) return;
      if (isTyping(event.target) || document.querySelector('dialog[open]')) {
        prefix = null;
        return;
      }
      const all = [...entries.current.values()];
      const pending = prefix && event.timeStamp - prefix.at < SEQUENCE_MS ? prefix.key : null;
      const keys = pending ? `${pending} ${event.key}` : event.key;
      prefix = null;
      const matches = all.filter((entry) => entry.keys === keys);
      const match = matches.find((entry) => !entry.global) ?? matches[0];
      if (match) {
        event.preventDefault();
        match.run();
        return;
      }
      if (all.some((entry) => entry.keys.startsWith(`${event.key} `))) prefix = { key: event.key, at: event.timeStamp };
    };
    document.addEventListener('keydown', onKeyDown);
    return () => document.removeEventListener('keydown', onKeyDown);
  }, []);

  return <ShortcutsContext.Provider value={registry}>{children}</ShortcutsContext.Provider>;
}

function useRegistry(): Registry {
  const registry = useContext(ShortcutsContext);
  if (!registry) throw new Error('Shortcuts are used outside <ShortcutsProvider>.');
  return registry;
}

/**
 * Binds `spec.keys` to `run` while the component is mounted and `enabled` holds (an action that does
 * not apply has no shortcut). `global` marks the app-wide bindings, which a page's own may override.
 */
export function useShortcut(spec: ShortcutSpec, run: () => void, { enabled = true, global = false } = {}): void {
  const { register } = useRegistry();
  const id = useId();
  const latest = useRef(run);
  latest.current = run;
  const { keys, label, group } = spec;
  useEffect(() => {
    if (!enabled) return;
    return register({ id, keys, label, group, global, run: () => latest.current() });
  }, [register, id, keys, label, group, global, enabled]);
}

/** The help overlay's state, and the shortcuts that work now, grouped, a page's own over a global one. */
export function useShortcutsHelp(): Registry['help'] & { groups: () => Array<[string, ShortcutSpec[]]> } {
  const registry = useRegistry();
  return {
    ...registry.help,
    groups: () => {
      const shown = new Map<string, Entry>();
      for (const entry of registry.entries()) {
        const seen = shown.get(entry.keys);
        if (!seen || (seen.global && !entry.global)) shown.set(entry.keys, entry);
      }
      const groups = new Map<string, ShortcutSpec[]>();
      for (const entry of [...shown.values()].sort((a, b) => Number(b.global) - Number(a.global))) {
        groups.set(entry.group, [...(groups.get(entry.group) ?? []), entry]);
      }
      return [...groups];
    },
  };
}

// A field the operator types in: a shortcut key there is text.
function isTyping(target: EventTarget | null): boolean {
  if (!(target instanceof HTMLElement)) return false;
  if (target.isContentEditable || target instanceof HTMLTextAreaElement || target instanceof HTMLSelectElement) return true;
  return target instanceof HTMLInputElement && !['checkbox', 'radio', 'button', 'submit', 'reset', 'range', 'color'].includes(target.type);
}

// A focus asked for by a shortcut on another page (`/` anywhere focuses the runs search): the
// shortcut navigates, and the field takes the focus when it mounts.
let focusRequest: string | null = null;

export function requestFocus(name: string): void {
  focusRequest = name;
}

/** True once, for the field that a shortcut asked to focus. */
export function takeFocusRequest(name: string): boolean {
  if (focusRequest !== name) return false;
  focusRequest = null;
  return true;
}

/** A binding as an element, for lists of them (the side nav's links). */
export function Shortcut({ run, enabled, global, ...spec }: ShortcutSpec & { run: () => void; enabled?: boolean; global?: boolean }) {
  useShortcut(spec, run, { enabled, global });
  return null;
}
