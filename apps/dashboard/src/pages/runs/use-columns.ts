import { useState } from 'react';
import { storageKey } from '../../lib/storage-key';

/** The runs table's columns an operator may add; hidden until chosen. */
export const OPTIONAL_COLUMNS = [{ id: 'keys', label: 'Keys' }] as const;
export type OptionalColumn = (typeof OPTIONAL_COLUMNS)[number]['id'];

export interface Columns {
  shown: ReadonlySet<OptionalColumn>;
  toggle: (id: OptionalColumn) => void;
}

// A preference of this browser, not part of a view: a shared link keeps the reader's own columns.
const KEY = storageKey('runs-columns');

export function useColumns(): Columns {
  const [shown, setShown] = useState(readStored);
  return {
    shown,
    toggle: (id) => {
      const next = new Set(shown);
      if (!next.delete(id)) next.add(id);
      setShown(next);
      try {
        localStorage.setItem(KEY, JSON.stringify([...next]));
      } catch {
        // storage disabled: the choice lasts for this page
      }
    },
  };
}

function readStored(): ReadonlySet<OptionalColumn> {
  try {
    const stored: unknown = JSON.parse(localStorage.getItem(KEY) ?? '[]');
    return new Set(OPTIONAL_COLUMNS.map((c) => c.id).filter((id) => Array.isArray(stored) && stored.includes(id)));
  } catch {
    return new Set(); // storage disabled, or not ours to read
  }
}
