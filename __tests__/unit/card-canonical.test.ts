/** The signed form of a card (§8.4.1): proto field presence, `signatures` excluded, RFC 8785 JCS. */
import { canonicalCardPayload, cardWithoutDefaults } from '../../lib/protocol/card-canonical';
import type { AgentCard } from '../../lib/protocol/schemas';

describe('canonicalCardPayload', () => {
  it("gives the spec's own example (§8.4.1) byte for byte", () => {
    const fragment = {
      name: 'Example Agent',
      description: '',
      capabilities: { streaming: false, pushNotifications: false, extensions: [] },
      skills: [],
    };
    expect(canonicalCardPayload(fragment as unknown as AgentCard)).toBe(
      '{"capabilities":{"pushNotifications":false,"streaming":false},"description":"","name":"Example Agent","skills":[]}',
    );
  });

  it('omits defaults of plain fields, keeps optional-presence and message fields, excludes signatures, keeps unknown fields', () => {
    const card = {
      name: 'A',
      description: 'B',
      version: '1',
      supportedInterfaces: [{ url: 'https://a', protocolBinding: 'JSONRPC', protocolVersion: '1.0', tenant: '' }],
      capabilities: { extendedAgentCard: false, extensions: [{ uri: 'urn:x', required: false, description: '', params: {} }] },
      documentationUrl: '',
      defaultInputModes: ['text/plain'],
      defaultOutputModes: ['text/plain'],
      skills: [{ id: 's', name: 'S', description: 'D', tags: ['t'], examples: [], securityRequirements: [{ schemes: { bearer: { list: [] } } }] }],
      securitySchemes: { bearer: { httpAuthSecurityScheme: { scheme: 'Bearer', bearerFormat: '', description: '' } } },
      signatures: [{ protected: 'p', signature: 's' }],
      url: 'https://a',
      additionalInterfaces: [],
    } as unknown as AgentCard;
    expect(JSON.parse(canonicalCardPayload(card))).toEqual({
      name: 'A',
      description: 'B',
      version: '1',
      supportedInterfaces: [{ url: 'https://a', protocolBinding: 'JSONRPC', protocolVersion: '1.0' }],
      capabilities: { extendedAgentCard: false, extensions: [{ uri: 'urn:x', params: {} }] },
      documentationUrl: '',
      defaultInputModes: ['text/plain'],
      defaultOutputModes: ['text/plain'],
      skills: [{ id: 's', name: 'S', description: 'D', tags: ['t'], securityRequirements: [{ schemes: { bearer: {} } }] }],
      securitySchemes: { bearer: { httpAuthSecurityScheme: { scheme: 'Bearer' } } },
      url: 'https://a',
      additionalInterfaces: [],
    });
    expect(cardWithoutDefaults(card).signatures).toEqual([{ protected: 'p', signature: 's' }]);
  });
});
