import { useState } from 'react';
import type { Run } from '../../api/types';
import { storageKey } from '../../lib/storage-key';

/**
 * The runs table's summary column: one field of each run's input, or one of its business keys, that
 * says what the run is about (an order id, a customer). The operator picks it from the fields the
 * runs on screen have; the choice is this browser's, like the columns.
 */
export interface SummaryField {
  source: 'input' | 'keys';
  name: string;
}

export interface Summary {
  field: SummaryField | null;
  choose: (field: SummaryField | null) => void;
}

const KEY = storageKey('runs-summary');
/** Fields offered, at most: an input may be a large object. */
const MAX_FIELDS = 40;

export function useSummary(): Summary {
  const [field, setField] = useState(readStored);
  return {
    field,
    choose: (next) => {
      setField(next);
      try {
        if (next) localStorage.setItem(KEY, JSON.stringify(next));
        else localStorage.removeItem(KEY);
      } catch {
        // storage disabled: the choice lasts for this page
      }
    },
  };
}

function readStored(): SummaryField | null {
  try {
    const stored = JSON.parse(localStorage.getItem(KEY) ?? 'null') as Partial<SummaryField> | null;
    return stored && (stored.source === 'input' || stored.source === 'keys') && typeof stored.name === 'string'
      ? { source: stored.source, name: stored.name }
      : null;
  } catch {
    return null; // storage disabled, or not ours to read
  }
}

/** The input's top-level fields and the key names of these runs, sorted, and the chosen field even when none has it. */
export function summaryFields(runs: Run[], chosen: SummaryField | null): SummaryField[] {
  const input = new Set<string>();
  const keys = new Set<string>();
  for (const run of runs) {
    if (isRecord(run.input)) for (const name of Object.keys(run.input)) if (input.size < MAX_FIELDS) input.add(name);
    for (const name of Object.keys(run.keys ?? {})) keys.add(name);
  }
  if (chosen) (chosen.source === 'input' ? input : keys).add(chosen.name);
  const sorted = (names: Set<string>) => [...names].sort((a, b) => a.localeCompare(b));
  return [
    ...sorted(input).map((name) => ({ source: 'input' as const, name })),
    ...sorted(keys).map((name) => ({ source: 'keys' as const, name })),
  ];
}

/** The field's value in this run as text: a string as is, anything else as JSON; undefined when absent. */
export function summaryValue(run: Run, field: SummaryField): string | undefined {
  const value = field.source === 'keys' ? run.keys?.[field.name] : isRecord(run.input) ? run.input[field.name] : undefined;
  if (value === undefined) return undefined;
  return typeof value === 'string' ? value : JSON.stringify(value);
}

/** How a field is named in the picker and its option value: `input.orderId`, `key customer`. */
export function summaryLabel(field: SummaryField): string {
  return field.source === 'input' ? `input.${field.name}` : `key ${field.name}`;
}

export function summaryOption(field: SummaryField): string {
  return `${field.source}:${field.name}`;
}

export function fromSummaryOption(value: string): SummaryField | null {
  const colon = value.indexOf(':');
  const source = value.slice(0, colon);
  return colon > 0 && (source === 'input' || source === 'keys') ? { source, name: value.slice(colon + 1) } : null;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
