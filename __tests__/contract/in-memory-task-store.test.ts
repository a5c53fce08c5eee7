/**
 * The store contract suite on the store we ship, directly and behind 1-5 ms of random latency per
 * call (where reads return stale snapshots and concurrent writes arrive late).
 */
import { InMemoryTaskStore } from 'a2a-express-kit';
import { describeTaskStoreContract, withLatency } from 'a2a-express-kit/testing';

describeTaskStoreContract('InMemoryTaskStore', () => new InMemoryTaskStore());

describeTaskStoreContract('InMemoryTaskStore behind withLatency', () => withLatency(new InMemoryTaskStore()));
