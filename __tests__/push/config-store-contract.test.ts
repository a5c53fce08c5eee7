/** The PushConfigStore contract, run against the in-memory store. */
import { InMemoryPushConfigStore } from '../../lib';
import { describePushConfigStoreContract } from '../../lib/testing/push-config-store-contract';

describePushConfigStoreContract('InMemoryPushConfigStore', () => new InMemoryPushConfigStore());
