/**
 * What ExpiringLeases offers a backend whose store writes take and give back leases (PostgreSQL's,
 * see postgres-write-leases.ts), without a database: adopt() holds and renews a lease another
 * statement took; a lease given back by another statement stops renewing, leaves the held set, and
 * its release() sends nothing; a renewal that finds it gone while that statement is on its way is
 * no loss; after close(), an adopted lease is given back at once.
 */
import { silentLogger } from '../../lib/options';
import type { LeasedTask, TaskLease } from '../../lib/engine/seams/task-leases';
import { ExpiringLeases, type HeldLease, type LeaseRef, type ReleaseNotices } from '../../lib/backends/shared/expiring-leases';
import { until } from '../helpers/async';

const TTL = 60;
const task: LeasedTask = { scope: { tenant: 't', owner: 'o' }, taskId: 'task-1' };

/** Leases in a Map; records the hooks and the statements it is asked for. */
class HandbackLeases extends ExpiringLeases {
  readonly rows = new Map<string, string>();
  readonly held = new Map<string, HeldLease>();
  renewals = 0;
  releases = 0;

  constructor() {
    super(TTL, silentLogger);
  }

  /** What a store write that takes the lease does, then hands it over. */
  takenByWrite(key: string): TaskLease | undefined {
    const ref = this.newRef(key, task);
    this.rows.set(key, ref.holder);
    return this.adopt(ref);
  }

  protected async take(): Promise<undefined> {
    throw new Error('not used: the writes take the leases here');
  }

  protected async renew({ key, holder }: LeaseRef) {
    this.renewals++;
    return this.rows.get(key) === holder;
  }

  protected async release({ key, holder }: LeaseRef) {
    this.releases++;
    if (this.rows.get(key) === holder) this.rows.delete(key);
  }

  protected listenForRelease(): ReleaseNotices {
    return { ready: Promise.resolve(), stop: () => {} };
  }

  protected async closeNotices() {}

  async claimExpired(): Promise<LeasedTask[]> {
    return [];
  }

  protected override onHeld(lease: HeldLease) {
    this.held.set(lease.ref.key, lease);
  }

  protected override onDropped(lease: HeldLease) {
    this.held.delete(lease.ref.key);
  }
}

describe('ExpiringLeases: leases taken and given back by other statements', () => {
  it('holds and renews an adopted lease; given back, it stops renewing and its release() sends nothing', async () => {
    const leases = new HandbackLeases();
    const lease = leases.takenByWrite('k')!;
    expect(leases.heldCount).toBe(1);
    const held = leases.held.get('k')!;
    await until(() => leases.renewals >= 2, 'renewals of the adopted lease');

    held.givingBack();
    leases.rows.delete('k'); // the write's statement deleted the row
    held.gaveBack(true);
    expect(leases.heldCount).toBe(0);
    expect(leases.held.has('k')).toBe(false);
    const renewals = leases.renewals;
    await lease.release();
    expect(leases.releases).toBe(0);
    expect(lease.lost).toBe(false);
    // No renewal timer left: a few time-to-lives later, still none.
    await new Promise((resolve) => setTimeout(resolve, TTL * 2));
    expect(leases.renewals).toBe(renewals);
    await leases.close();
  });

  it('a renewal that finds the lease gone while the giving-back statement is on its way is no loss', async () => {
    const leases = new HandbackLeases();
    const lease = leases.takenByWrite('k')!;
    const held = leases.held.get('k')!;
    held.givingBack();
    leases.rows.delete('k');
    const before = leases.renewals;
    await until(() => leases.renewals > before, 'a renewal after the row went');
    expect(lease.lost).toBe(false);
    // The statement failed after all: the lease is held as before, and a later renewal decides.
    held.gaveBack(false);
    await until(() => lease.lost, 'the lease to be found lost by the next renewal');
    await leases.close();
  });

  it('a lease adopted after close() is given back at once', async () => {
    const leases = new HandbackLeases();
    await leases.close();
    expect(leases.takenByWrite('k')).toBeUndefined();
    await until(() => leases.releases === 1, 'the release of the adopted lease');
    expect(leases.rows.has('k')).toBe(false);
  });
});
