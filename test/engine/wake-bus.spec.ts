import { WakeBus } from 'nestjs-durable/runtime/wake-bus';

// A wait in-process reads between its waits (a signal, its children, a select's arms): the wakes that
// come while it reads must reach its next wait, or it waits out its time (up to inlineWaitMs).

describe('the in-process wake bus: a watch of a run', () => {
  const settled = async (wait: Promise<void>) => {
    let done = false;
    void wait.then(() => (done = true));
    for (let i = 0; i < 5; i++) await Promise.resolve();
    return done;
  };

  it('keeps a wake that came while no wait was pending for the next wait, which then ends at once', async () => {
    const bus = new WakeBus();
    const wakes = bus.watch('r1');
    bus.wake('r1'); // as when a NOTIFY arrives while the execution reads
    expect(await settled(wakes.next(60_000))).toBe(true);
    expect(await settled(wakes.next(60_000))).toBe(false); // one wake answers one wait (close clears its timer)
    wakes.close();
  });

  it('ends a pending wait at a wake of its run, not of another, and goes on listening after it', async () => {
    const bus = new WakeBus();
    const wakes = bus.watch('r1');
    const first = wakes.next(60_000);
    bus.wake('r2');
    expect(await settled(first)).toBe(false);
    bus.wake('r1');
    expect(await settled(first)).toBe(true);
    const second = wakes.next(60_000);
    bus.wake('r1');
    expect(await settled(second)).toBe(true);
    wakes.close();
  });

  it('close ends a pending wait; a later watch of the run listens afresh', async () => {
    const bus = new WakeBus();
    const wakes = bus.watch('r1');
    const wait = wakes.next(60_000);
    wakes.close();
    expect(await settled(wait)).toBe(true);
    const other = bus.watch('r1');
    bus.wake('r1');
    expect(await settled(other.next(60_000))).toBe(true); // a later watch has its own listener
    other.close();
  });
});
