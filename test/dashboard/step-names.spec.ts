import { describeStep } from '../../apps/dashboard/src/lib/step-names';

// The journal's keys in words, as the dashboard lists them (journal, timeline, a failed run's step):
// the formats the engine writes (libs/durable/src/runtime), with the kind each is recorded under.

describe('step keys in words', () => {
  const meaning = (key: string, kind?: string) => describeStep(key, kind).meaning;

  it('reads each key the engine writes for a primitive as what it means', () => {
    expect(meaning('signal-deadline:manager-approval', 'deadline')).toBe('deadline of signal manager-approval');
    expect(meaning('signal-deadline:manager-approval:timed-out', 'timeout')).toBe('signal manager-approval timed out');
    expect(meaning('sleep:nap', 'sleep')).toBe('sleep nap');
    expect(meaning('child:ship', 'child')).toBe('start of child ship');
    expect(meaning('child-result:ship', 'child-result')).toBe('result of child ship');
    expect(meaning('select:decision', 'select')).toBe('select decision: the winner');
    expect(meaning('select:decision:deadline', 'deadline')).toBe('deadline of select decision');
    expect(meaning('select:decision:timer:reminder', 'sleep')).toBe('timer reminder of select decision');
    expect(meaning('run-deadline:passed', 'deadline-passed')).toBe('run deadline passed');
    expect(meaning('patch:v2-shipping', 'patch')).toBe('patch v2-shipping');
    expect(meaning('set-keys', 'set-keys')).toBe('business keys set');
    expect(meaning('consume:orders', 'step')).toBe('channel orders consumed to its closing message');
    expect(meaning('consume:orders:evt-42', 'step')).toBe('message evt-42 of channel orders handled');
    // Waits that journal nothing, named where a run deadline passed (its error's `at`).
    expect(meaning('signal:approval', 'wait')).toBe('wait for signal approval');
    expect(meaning('receive:orders', 'wait')).toBe('receive from channel orders');
  });

  it('says which call of a repeated name it was', () => {
    expect(meaning('sleep:nap#2', 'sleep')).toBe('sleep nap, 2nd call');
    expect(meaning('signal-deadline:approval#3:timed-out', 'timeout')).toBe('signal approval timed out, 3rd call');
    expect(meaning('select:pick#11:timer:reminder', 'sleep')).toBe('timer reminder of select pick, 11th call');
    expect(meaning('charge#21', 'step')).toBe('charge, 21st call');
  });

  it("keeps a step's own name, and the key itself beside every meaning", () => {
    expect(describeStep('charge-card', 'step')).toEqual({ key: 'charge-card', meaning: 'charge-card', internal: false });
    expect(describeStep('sleep:nap', 'sleep')).toEqual({ key: 'sleep:nap', meaning: 'sleep nap', internal: true });
    // A step of the workflow's own named like a primitive's key is not taken for one: its kind says so.
    expect(meaning('sleep:nap', 'step')).toBe('sleep:nap');
    expect(meaning('child:ship', 'step')).toBe('child:ship');
    // A key keyed by its arguments (`step(name, fn, { key })`) stays as written.
    expect(meaning('charge:order-17', 'step')).toBe('charge:order-17');
  });

  it("reads names back as the application gave them: a '%', ':' or '#' in them is escaped in the key", () => {
    expect(meaning('signal:order%3Apaid', 'wait')).toBe('wait for signal order:paid');
    expect(meaning('consume:a%3Ab:m:1', 'step')).toBe('message m:1 of channel a:b handled');
    expect(meaning('sleep:a%23b#2', 'sleep')).toBe('sleep a#b, 2nd call');
    expect(meaning('go%232', 'step')).toBe('go#2');
    expect(meaning('100%2525#3', 'step')).toBe('100%25, 3rd call');
    expect(meaning('charge%3Aa', 'step')).toBe('charge:a');
    // What ends a key is raw, and not counted: a child step, a patch id.
    expect(meaning('child:a#2', 'child')).toBe('start of child a#2');
    expect(meaning('patch:v%3A2', 'patch')).toBe('patch v%3A2');
    // A keyed step's key is the application's: `item` keyed `order#2` is no 2nd call.
    expect(meaning('item:order#2', 'step')).toBe('item:order#2');
  });

  it('reads a key without its kind (a failed run names only its step) by the first rule that fits', () => {
    expect(meaning('signal-deadline:approval')).toBe('deadline of signal approval');
    expect(meaning('child-result:ship')).toBe('result of child ship');
    expect(meaning('reserve')).toBe('reserve');
  });
});
