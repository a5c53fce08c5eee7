/** The PushConfigStore contract, run against the in-memory store. */
import { InMemoryPushConfigStore } from '../../lib';
import { describePushConfigStoreContract } from '../../lib/server/push/push-config-store-contract';

describePushConfigStoreContract('InMemoryPushConfigStore', () => new InMemoryPushConfigStore());
