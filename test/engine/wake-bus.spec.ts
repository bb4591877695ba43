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

  it('ends at once a wait after a read during which a wake came (since its mark), and only that one', async () => {
    const bus = new WakeBus();
    const wakes = bus.watch('r1');
    const mark = wakes.mark(); // taken before the read
    bus.wake('r1'); // as when a NOTIFY arrives while the execution reads
    expect(await settled(wakes.next(60_000, mark))).toBe(true);
    expect(await settled(wakes.next(60_000, wakes.mark()))).toBe(false); // a read after the wake saw what it brought
    wakes.close();
  });

  it('answers each of several waits side by side at one wake, whichever began last (the handles of one all)', async () => {
    const bus = new WakeBus();
    const wakes = bus.watch('r1');
    const first = wakes.next(60_000, wakes.mark());
    const second = wakes.next(60_000, wakes.mark());
    bus.wake('r1');
    expect(await settled(second)).toBe(true);
    expect(await settled(first)).toBe(true);
    wakes.close();
  });

  it("a wait's own time ends it, not another's, after a later wait was woken", async () => {
    const bus = new WakeBus();
    const wakes = bus.watch('r1');
    const first = wakes.next(50, wakes.mark());
    const second = wakes.next(60_000, wakes.mark());
    bus.wake('r1');
    expect(await settled(second)).toBe(true);
    await first; // before: the later wait's answer replaced the first's, and the first never settled
    const third = wakes.next(60_000, wakes.mark());
    expect(await settled(third)).toBe(false);
    wakes.close();
    expect(await settled(third)).toBe(true);
  });

  it('ends a pending wait at a wake of its run, not of another, and goes on listening after it', async () => {
    const bus = new WakeBus();
    const wakes = bus.watch('r1');
    const first = wakes.next(60_000, wakes.mark());
    bus.wake('r2');
    expect(await settled(first)).toBe(false);
    bus.wake('r1');
    expect(await settled(first)).toBe(true);
    const second = wakes.next(60_000, wakes.mark());
    bus.wake('r1');
    expect(await settled(second)).toBe(true);
    wakes.close();
  });

  it('close ends a pending wait; a later watch of the run listens afresh', async () => {
    const bus = new WakeBus();
    const wakes = bus.watch('r1');
    const wait = wakes.next(60_000, wakes.mark());
    wakes.close();
    expect(await settled(wait)).toBe(true);
    const other = bus.watch('r1');
    bus.wake('r1');
    expect(await settled(other.next(60_000, 0))).toBe(true); // a later watch has its own listener
    other.close();
  });
});
