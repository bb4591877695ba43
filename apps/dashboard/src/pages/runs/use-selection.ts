import { useState } from 'react';

export interface Selection {
  ids: ReadonlySet<string>;
  toggle: (id: string) => void;
  setMany: (ids: string[], selected: boolean) => void;
  clear: () => void;
}

/**
 * The runs ticked for a bulk action. Scoped to `scope` (the filter and page): another view starts
 * with nothing ticked, so a bulk action never hits runs the operator can no longer see.
 */
export function useSelection(scope: string): Selection {
  const [state, setState] = useState<{ scope: string; ids: ReadonlySet<string> }>({ scope, ids: new Set() });
  const ids = state.scope === scope ? state.ids : new Set<string>();
  const update = (next: Set<string>) => setState({ scope, ids: next });
  return {
    ids,
    toggle: (id) => {
      const next = new Set(ids);
      if (next.has(id)) next.delete(id);
      else next.add(id);
      update(next);
    },
    setMany: (many, selected) => {
      const next = new Set(ids);
      for (const id of many) {
        if (selected) next.add(id);
        else next.delete(id);
      }
      update(next);
    },
    clear: () => update(new Set()),
  };
}
