import { Lease, leaseClock } from 'nestjs-durable/runtime/lease';

/** The rule a step's guard reads (lease-renewal.e2e-spec tests it against a real server): when a lease may begin a step. */
describe('Lease: when a step may begin on it', () => {
  const leaseMs = 30_000;
  let renewals = 0;
  const lease = (sentAt = leaseClock()) => new Lease('run', '1', { leaseMs, renew: async () => void renewals++ }, sentAt);

  it('is fresh just after its claim, and not once two thirds of it have passed', () => {
    expect(lease().fresh).toBe(true);
    const now = leaseClock();
    expect(lease({ mono: now.mono - (2 * leaseMs) / 3 - 1, wall: now.wall - (2 * leaseMs) / 3 - 1 }).fresh).toBe(false);
  });

  it('is not fresh by either clock alone: the monotonic one stops while the machine sleeps, the wall clock can be stepped back', () => {
    const now = leaseClock();
    expect(lease({ mono: now.mono, wall: now.wall - leaseMs }).fresh).toBe(false); // slept: only the wall clock moved on
    expect(lease({ mono: now.mono - leaseMs, wall: now.wall }).fresh).toBe(false); // the wall clock stepped back
  });

  it('a renewal sent later moves it on; one sent earlier than the last does not move it back', () => {
    const now = leaseClock();
    const stale = lease({ mono: now.mono - leaseMs, wall: now.wall - leaseMs });
    stale.renewed(now);
    expect(stale.fresh).toBe(true);
    stale.renewed({ mono: now.mono - leaseMs, wall: now.wall - leaseMs });
    expect(stale.fresh).toBe(true);
  });

  it('once lost or closed it is never fresh, and confirming it answers false without a renewal', async () => {
    for (const end of ['lost', 'closed'] as const) {
      const held = lease();
      if (end === 'lost') held.markLost();
      else held.close();
      const before = renewals;
      expect(held.fresh).toBe(false);
      await expect(held.confirm()).resolves.toBe(false);
      expect(renewals).toBe(before);
    }
  });

  it('a loss a refused write found is told which it was by a later cancel or renewal; a takeover or a cancel once known stays', () => {
    const refusedThenCancelled = lease();
    refusedThenCancelled.markLost(); // a write refused by the replaced token
    refusedThenCancelled.markLost('revoked'); // this instance's cancel, whose lock the write had waited on
    expect(refusedThenCancelled.lost).toBe('revoked');
    const takenThenCancelled = lease();
    takenThenCancelled.markLost('taken-over');
    takenThenCancelled.markLost('revoked');
    expect(takenThenCancelled.lost).toBe('taken-over');
    const refused = lease();
    refused.markLost();
    expect(refused.lost).toBe('refused');
  });
});
