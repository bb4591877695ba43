import { formatExactSpan } from '../../apps/dashboard/src/lib/format';

describe("the dashboard's exact spans (a queue's rate period, a schedule's catch-up window and jitter)", () => {
  it('keeps every unit a setting has, where the coarse spans round down', () => {
    expect(formatExactSpan(90_000)).toBe('1 min 30 s'); // "1 min" as a coarse span
    expect(formatExactSpan(5_400_000)).toBe('1 h 30 min');
    expect(formatExactSpan(60_000)).toBe('1 min');
    expect(formatExactSpan(90_061_000)).toBe('1 d 1 h 1 min 1 s');
    expect(formatExactSpan(1_500)).toBe('1500 ms'); // a part of a second: in ms
    expect(formatExactSpan(250)).toBe('250 ms');
    expect(formatExactSpan(0)).toBe('0 s');
  });
});
