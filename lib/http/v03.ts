/**
 * What both v0.3 codecs (compatibility) share: how a thrown value is told to a v0.3 client, and
 * the unknown-method answer that points a 1.0 client without its header to `A2A-Version`.
 */
import { A2AError } from '../errors.js';
import { toV03Error } from '../protocol/v0_3/translate.js';
import { OPERATIONS } from './operations.js';

/** A thrown value as a v0.3 client is answered (VersionNotSupported stays -32009: it is told in 1.0 terms). */
export const v03Error = (error: unknown): unknown => (error instanceof A2AError && error.kind !== 'VersionNotSupported' ? toV03Error(error) : error);

/** A method v0.3 does not have: a v1.0 name sent without a version header is a 1.0 client that forgot it. */
export function v03UnknownMethod(method: string): A2AError {
  if (Object.hasOwn(OPERATIONS, method)) {
    // Told in 1.0 terms (-32009): the method names which version the client meant.
    return new A2AError(
      'VersionNotSupported',
      `${method} is an A2A 1.0 method, but this request is served as 0.3 (it states no A2A-Version, or 0.3): send the header A2A-Version: 1.0`,
      {
        metadata: { requestedVersion: '', supportedVersions: '1.0, 0.3' },
      },
    );
  }
  return new A2AError('MethodNotFound', `Method not found: ${method}`);
}
