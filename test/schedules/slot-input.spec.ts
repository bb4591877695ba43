import { InvalidPayloadError } from 'nestjs-durable';
import { byInputSize, MAX_INPUT_PER_STATEMENT } from 'nestjs-durable/persistence/schedule.repository';
import { slotRunInput } from 'nestjs-durable/schema/schedule-spec';
import { deserialize, serialize, serializePayload } from 'nestjs-durable/schema/serializer';

describe("a slot run's input", () => {
  const slot = new Date('2026-12-02T16:09:00.000Z');
  /** What the pass wrote before it stamped stored inputs without decoding them. */
  const decoded = (stored: string) => serializePayload({ ...deserialize<object>(stored), scheduledAt: slot }, 'input');

  it('is the stored input with scheduledAt, in the text a decode and an encode write, whatever the stored object holds', () => {
    const inputs: unknown[] = [
      {},
      { tenant: 'acme', n: 1, nested: { deep: [1, 'two', null] } },
      { at: new Date('2020-01-01T00:00:00Z'), ids: new Set([1, 2]), byKey: new Map([['a', 1n]]), bytes: Buffer.from('hi') },
      { missing: undefined, inf: Infinity, nan: NaN },
      { scheduledAt: 'overwritten', after: true },
      JSON.parse('{"__proto__":{"polluted":true},"text":"nul \\u0000 and a lone \\ud800 surrogate"}'),
      { $t: 'a field named like the tag', v: 1 }, // stored wrapped: stamped through a decode
      { inner: { $t: 'Date', v: 'not a date but a user object' } },
    ];
    for (const input of inputs) {
      const stored = serialize(input, 'input');
      const stamped = slotRunInput('s', stored, slot);
      expect(stamped).toBe(decoded(stored));
      expect(deserialize<{ scheduledAt: Date }>(stamped).scheduledAt).toEqual(slot);
    }
    // A field named `__proto__` (as JSON.parse makes one) is kept as a field, never the prototype.
    const proto = deserialize<Record<string, unknown>>(
      slotRunInput('s', serialize(JSON.parse('{"__proto__":{"x":1},"y":2}'), 'input'), slot),
    );
    expect(Object.getPrototypeOf(proto)).toBe(Object.prototype);
    expect(Object.keys(proto)).toEqual(['__proto__', 'y', 'scheduledAt']);
    expect(Object.getOwnPropertyDescriptor(proto, '__proto__')?.value).toEqual({ x: 1 });
  });

  it('too large to store is refused naming the schedule, as a payload error', () => {
    const stored = serialize({ blob: 'x'.repeat(4 * 1024 * 1024 - 40) }, 'input');
    expect(() => slotRunInput('big', stored, slot)).toThrow(InvalidPayloadError);
    expect(() => slotRunInput('big', stored, slot)).toThrow(/Schedule "big": input cannot be stored: it is 4\.0 MiB encoded/);
  });

  it('the runs of a pass or a backfill go out in statements of bounded input, in order, none lost', () => {
    const runs = [5, 5, 5, 12, 1, 1].map((n, i) => ({ id: `r${i}`, input: 'x'.repeat(n) }));
    expect(byInputSize(runs, 10).map((part) => part.map((r) => r.id))).toEqual([['r0', 'r1'], ['r2'], ['r3'], ['r4', 'r5']]);
    expect(byInputSize([], 10)).toEqual([]);
    // Each character escaped at most once and at most 3 bytes in UTF-8: under the 256 MiB one jsonb value holds.
    expect(MAX_INPUT_PER_STATEMENT * 2 * 3).toBeLessThan(256 * 1024 * 1024);
  });
});
