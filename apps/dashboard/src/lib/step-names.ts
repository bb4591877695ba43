// The journal's keys in words. The engine writes a key per durable call (libs/durable/src/runtime):
// a step under its own name, and its primitives under prefixed keys that read as internals
// (`signal-deadline:approval`, `child-result:ship`). The same name called again in one execution
// takes `#2`, `#3`… after it (Execution.keyFor), before any suffix the primitive adds. The names it
// counts have their `%`, `:` and `#` escaped (runtime/checkpoint-keys.ts), so the separators are the
// engine's; the meaning reads those names back. What ends a key (a child step, a patch id, a select's
// arm, a message key) is raw.

/** A journal key, as the operator reads it, and the key itself. `internal`: the engine wrote it for a primitive. */
export interface StepName {
  meaning: string;
  key: string;
  internal: boolean;
}

/**
 * What each prefixed key means; `kinds` are the step kinds the engine records it under (`undefined`:
 * any). `counted`: the first part is a name Execution.keyFor counted, escaped and maybe numbered.
 */
const RULES: Array<{ pattern: RegExp; kinds?: readonly string[]; counted?: true; words: (...parts: string[]) => string }> = [
  // waitForSignal(…, { timeout }): the deadline journaled once, then the timeout if it came first.
  { pattern: /^signal-deadline:(.+):timed-out$/, counted: true, kinds: ['timeout'], words: (name) => `signal ${name} timed out` },
  { pattern: /^signal-deadline:(.+)$/, counted: true, kinds: ['deadline'], words: (name) => `deadline of signal ${name}` },
  { pattern: /^sleep:(.+)$/, counted: true, kinds: ['sleep'], words: (name) => `sleep ${name}` },
  // select: its timers and deadline are journaled under the select's key, the winner under the key itself.
  { pattern: /^select:(.+):timer:([^:]+)$/, counted: true, kinds: ['sleep'], words: (name, arm) => `timer ${arm} of select ${name}` },
  { pattern: /^select:(.+):deadline$/, counted: true, kinds: ['deadline'], words: (name) => `deadline of select ${name}` },
  { pattern: /^select:(.+)$/, counted: true, kinds: ['select'], words: (name) => `select ${name}: the winner` },
  { pattern: /^child:(.+)$/, kinds: ['child'], words: (step) => `start of child ${step}` },
  { pattern: /^child-result:(.+)$/, kinds: ['child-result'], words: (step) => `result of child ${step}` },
  { pattern: /^run-deadline:passed$/, kinds: ['deadline-passed'], words: () => 'run deadline passed' },
  { pattern: /^patch:(.+)$/, kinds: ['patch'], words: (id) => `patch ${id}` },
  { pattern: /^set-keys$/, kinds: ['set-keys'], words: () => 'business keys set' },
  // consume(): each message handled in a step keyed by the message, then the loop's end.
  {
    pattern: /^consume:([^:]+):(.+)$/,
    counted: true,
    kinds: ['step'],
    words: (channel, key) => `message ${key} of channel ${channel} handled`,
  },
  {
    pattern: /^consume:([^:]+)$/,
    counted: true,
    kinds: ['step'],
    words: (channel) => `channel ${channel} consumed to its closing message`,
  },
  // Keys of waits that journal nothing themselves; they appear where a run deadline passed (its error's `at`).
  { pattern: /^signal:(.+)$/, counted: true, kinds: ['wait'], words: (name) => `wait for signal ${name}` },
  { pattern: /^receive:(.+)$/, counted: true, kinds: ['wait'], words: (channel) => `receive from channel ${channel}` },
];

/**
 * The meaning of a journal key: `deadline of signal manager-approval` for `signal-deadline:manager-approval`,
 * `sleep nap, 2nd call` for `sleep:nap#2`. A key the engine did not prefix (a step's own name) means
 * itself. `kind` is the step's recorded kind; without it every rule is tried; `'wait'` names a wait's
 * own key (the `at` of a passed run deadline).
 */
export function describeStep(key: string, kind?: string): StepName {
  for (const rule of RULES) {
    if (kind !== undefined && rule.kinds && !rule.kinds.includes(kind)) continue;
    const match = rule.pattern.exec(key);
    if (!match) continue;
    const [first, ...rest] = match.slice(1);
    if (!rule.counted) return { key, meaning: rule.words(first, ...rest), internal: true };
    // The repeat count sits on the name the engine counted, the first part: `select:pick#2:timer:reminder`.
    const repeat = /^(.*)#(\d+)$/s.exec(first);
    if (repeat && Number(repeat[2]) >= 2) {
      return { key, meaning: `${rule.words(nameOf(repeat[1]), ...rest)}, ${ordinal(Number(repeat[2]))} call`, internal: true };
    }
    return { key, meaning: rule.words(nameOf(first), ...rest), internal: true };
  }
  // A raw ':' past the engine's prefixes is a keyed step's (`item:order#2`): its key is the application's, as given.
  if (key.includes(':')) return { key, meaning: key, internal: false };
  const repeat = /^(.*)#(\d+)$/s.exec(key);
  if (repeat && Number(repeat[2]) >= 2)
    return { key, meaning: `${nameOf(repeat[1])}, ${ordinal(Number(repeat[2]))} call`, internal: false };
  return { key, meaning: nameOf(key), internal: false };
}

/** A name as the key spells it, read back: `%25`, `%3A` and `%23` are `%`, `:` and `#`. */
function nameOf(part: string): string {
  return part.replace(/%(25|3A|23)/g, (_, hex: string) => String.fromCharCode(parseInt(hex, 16)));
}

/** "2nd", "3rd", "11th", "21st". */
function ordinal(n: number): string {
  const tens = n % 100;
  if (tens >= 11 && tens <= 13) return `${n}th`;
  return `${n}${['th', 'st', 'nd', 'rd'][n % 10] ?? 'th'}`;
}
