/**
 * A replica that has run no turn yet hears what is routed to it: createPostgresBackend resolves
 * once its process listens for cancel requests, so a cancel another replica routes right after
 * this one's first turn started (its LISTEN not yet issued before) is never lost. Subscribers
 * wait for their own LISTEN already (see postgres-event-bus.test.ts).
 */
import { createPostgresBackend, type PostgresBackend } from 'a2a-express-kit/postgres';
import { silentLogger } from 'a2a-express-kit';
import { useTestPostgres } from '../helpers/postgres';

const pg = useTestPostgres();

pg.describe('cancel requests on a fresh PostgreSQL replica', () => {
  const opened: PostgresBackend[] = [];
  afterEach(async () => {
    await Promise.all(opened.splice(0).map((backend) => backend.close()));
  });
  const open = async () => {
    const backend = await createPostgresBackend({ connectionString: pg.url(), schema: pg.schema, logger: silentLogger });
    opened.push(backend);
    return backend;
  };

  it('hears a cancel routed to it at once after its first cancel listener starts', async () => {
    const [fresh, other] = [await open(), await open()];
    // The other replica has a connection ready, as a serving replica has: its NOTIFY goes out at once.
    await other.pool.query({ text: 'SELECT 1' });
    let heard!: () => void;
    const cancelled = new Promise<'heard'>((resolve) => (heard = () => resolve('heard')));
    fresh.eventBus.onCancelRequest('task-key', () => heard());
    other.eventBus.requestCancel('task-key');
    // A NOTIFY reaches a listening connection in milliseconds; one not heard in 5 s was lost.
    let timer: NodeJS.Timeout | undefined;
    const lost = new Promise<'lost'>((resolve) => (timer = setTimeout(() => resolve('lost'), 5_000)));
    expect(await Promise.race([cancelled, lost])).toBe('heard');
    clearTimeout(timer);
  });
});
