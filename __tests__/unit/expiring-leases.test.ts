/**
 * The lease logic Redis and PostgreSQL share (lib/backends/shared/expiring-leases.ts), without a
 * database: a subclass keeps its leases in a Map with expiry times it is told. A wait ends at the
 * release notice, or at the holder's expiry by polling when no notice comes; a renewal that finds
 * the lease gone marks it lost; close() ends waits and stops renewals without releasing.
 */
import { silentLogger } from '../../lib/options';
import type { LeasedTask } from '../../lib/engine/seams/task-leases';
import { ExpiringLeases, type LeaseRef, type ReleaseNotices } from '../../lib/backends/shared/expiring-leases';
import { until } from '../helpers/async';

/** Leases in one Map shared by the "replicas"; release notices by key. */
class World {
  readonly leases = new Map<string, { holder: string; expiresAt: number }>();
  readonly notices = new Map<string, Set<() => void>>();
  renewals = 0;
}

class MapLeases extends ExpiringLeases {
  noticesClosed = false;
  constructor(
    readonly world: World,
    ttlMs: number,
  ) {
    super(ttlMs, silentLogger);
  }

  protected async take({ key, holder }: LeaseRef) {
    const held = this.world.leases.get(key);
    if (held && held.expiresAt > Date.now()) return { left: held.expiresAt - Date.now() };
    this.world.leases.set(key, { holder, expiresAt: Date.now() + this.ttlMs });
    return undefined;
  }

  protected async renew({ key, holder }: LeaseRef) {
    this.world.renewals++;
    const held = this.world.leases.get(key);
    if (held?.holder !== holder) return false;
    held.expiresAt = Date.now() + this.ttlMs;
    return true;
  }

  protected async release({ key, holder }: LeaseRef) {
    if (this.world.leases.get(key)?.holder !== holder) return;
    this.world.leases.delete(key);
    for (const notice of [...(this.world.notices.get(key) ?? [])]) notice();
  }

  protected listenForRelease(key: string, notice: () => void): ReleaseNotices {
    const set = this.world.notices.get(key) ?? new Set();
    this.world.notices.set(key, set);
    set.add(notice);
    return { ready: Promise.resolve(), stop: () => set.delete(notice) };
  }

  protected async closeNotices() {
    this.noticesClosed = true;
  }

  async claimExpired(): Promise<LeasedTask[]> {
    return [];
  }
}

const task: LeasedTask = { scope: { tenant: 't', owner: 'o' }, taskId: 'task-1' };

describe('ExpiringLeases (the Redis and PostgreSQL lease logic)', () => {
  const opened: MapLeases[] = [];
  const open = (world: World, ttlMs = 60_000) => {
    const leases = new MapLeases(world, ttlMs);
    opened.push(leases);
    return leases;
  };
  afterEach(() => Promise.all(opened.splice(0).map((leases) => leases.close())));

  it('gives a waiting acquire the lease when its holder releases it (the notice wakes it)', async () => {
    const world = new World();
    const [a, b] = [open(world), open(world)];
    const held = (await a.acquire('k', task, 0))!;
    expect(await b.acquire('k', task, 0)).toBeUndefined();
    const waiting = b.acquire('k', task, 60_000);
    await until(() => world.notices.get('k')?.size === 1, 'b listening');
    await held.release();
    const taken = await waiting;
    expect(taken).toBeDefined();
    expect(b.heldCount).toBe(1);
    expect(world.notices.get('k')?.size).toBe(0);
  });

  it('takes a lease whose holder stopped renewing once it expires, by polling (no notice comes)', async () => {
    const world = new World();
    world.leases.set('k', { holder: 'dead replica', expiresAt: Date.now() + 50 });
    const leases = open(world);
    expect(await leases.acquire('k', task, 10_000)).toBeDefined();
    expect(world.leases.get('k')?.holder).not.toBe('dead replica');
  });

  it('renews a held lease, and marks it lost when a renewal finds another holder', async () => {
    const world = new World();
    const leases = open(world, 60);
    const lease = (await leases.acquire('k', task, 0))!;
    await until(() => world.renewals >= 2, 'two renewals');
    expect(lease.lost).toBe(false);
    world.leases.set('k', { holder: 'someone else', expiresAt: Date.now() + 60_000 });
    await until(() => lease.lost, 'the lease reported lost');
    expect(leases.heldCount).toBe(0);
    await lease.release(); // leaves the new holder's alone
    expect(world.leases.get('k')?.holder).toBe('someone else');
  });

  it('close() ends pending waits with undefined, stops renewing and gives the notices back', async () => {
    const world = new World();
    const [a, b] = [open(world, 60), open(world)];
    await a.acquire('k', task, 0);
    const waiting = b.acquire('k', task, 60_000);
    await until(() => world.notices.get('k')?.size === 1, 'b listening');
    await b.close();
    expect(await waiting).toBeUndefined();
    expect(b.noticesClosed).toBe(true);
    expect(a.heldCount).toBe(1);
    await a.close();
    // Renewals stopped, the lease not released: it expires, and another replica settles its task.
    expect(a.heldCount).toBe(0);
    expect(world.leases.has('k')).toBe(true);
    await expect(a.acquire('other', task, 0)).rejects.toThrow('MapLeases is closed');
  });
});
