/** A2A-Version negotiation (§3.6): absent means 0.3; 1.0 and 1.0.x are served; the patch is ignored. */
import { A2AError } from '../errors.js';

export const SERVED_VERSION = '1.0';
const SERVED = /^1\.0(?:\.\d+)?$/;

/** Throws VersionNotSupported unless `requested` (header, else query parameter) is 1.0. */
export function negotiateVersion(requested: string | undefined): void {
  const value = requested?.trim();
  if (value && SERVED.test(value)) return;
  const asked = value ? value : '0.3 (no A2A-Version header)';
  throw new A2AError('VersionNotSupported', `A2A protocol version ${asked} is not supported; this endpoint serves ${SERVED_VERSION}: send the header A2A-Version: ${SERVED_VERSION}`, {
    metadata: { requestedVersion: value ?? '', supportedVersions: SERVED_VERSION },
  });
}
