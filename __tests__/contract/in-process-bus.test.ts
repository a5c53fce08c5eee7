/** The event bus contract on the bus we ship for one process. */
import { InProcessTaskEventBus } from 'a2a-express-kit';
import { describeTaskEventBusContract } from 'a2a-express-kit/testing';

describeTaskEventBusContract('InProcessTaskEventBus', () => new InProcessTaskEventBus());
