/** A2A-Version negotiation (§3.6): 1.0.x served; 0.3.x and no version (§3.6.2) while compatibility is on. */
import { A2AError } from '../errors.js';

export const SERVED_VERSION = '1.0';
export const LEGACY_VERSION = '0.3';

/** A protocol version a request can be served with. */
export type ProtocolVersion = typeof SERVED_VERSION | typeof LEGACY_VERSION;

/** Which versions an endpoint serves besides 1.0 (the router's `compatibility` option). */
export interface VersionPolicy {
  readonly v0_3: boolean;
}

const ONLY_1_0: VersionPolicy = Object.freeze({ v0_3: false });

const SERVED = /^1\.0(?:\.\d+)?$/;
const LEGACY = /^0\.3(?:\.\d+)?$/;

/** Whether `requested` (header, else query parameter) means v0.3: absent, empty, or 0.3.x (§3.6.2). */
export function isLegacyVersion(requested: string | undefined): boolean {
  const value = requested?.trim();
  return !value || LEGACY.test(value);
}

/** The version to serve `requested` with: 1.0, or 0.3 when `policy` admits it; else VersionNotSupported. */
export function negotiateVersion(requested: string | undefined, policy: VersionPolicy = ONLY_1_0): ProtocolVersion {
  const value = requested?.trim();
  if (value && SERVED.test(value)) return SERVED_VERSION;
  if (policy.v0_3 && (!value || LEGACY.test(value))) return LEGACY_VERSION;
  const asked = value ? value : '0.3 (no A2A-Version header)';
  const supported = policy.v0_3 ? `${SERVED_VERSION}, ${LEGACY_VERSION}` : SERVED_VERSION;
  throw new A2AError(
    'VersionNotSupported',
    `A2A protocol version ${asked} is not supported; this endpoint serves ${supported}: send the header A2A-Version: ${SERVED_VERSION}`,
    {
      metadata: { requestedVersion: value ?? '', supportedVersions: supported },
    },
  );
}
