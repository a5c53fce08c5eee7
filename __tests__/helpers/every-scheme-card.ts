/** A card with every security scheme type and OAuth flow a v1.0 card may carry (the card-shape suites share it). */
import type { AgentCardInput } from '../../lib';
import { testCard } from './fixtures';

export const everySchemeCard: AgentCardInput = {
  ...testCard,
  provider: { organization: 'Example', url: 'https://example.com' },
  documentationUrl: 'https://docs.example.com/agent',
  iconUrl: 'https://example.com/icon.png',
  capabilities: {
    streaming: true,
    pushNotifications: false,
    extendedAgentCard: true,
    extensions: [{ uri: 'https://example.com/ext/v1', description: 'An extension', required: false, params: { level: 1 } }],
  },
  securitySchemes: {
    bearer: { httpAuthSecurityScheme: { scheme: 'Bearer', bearerFormat: 'JWT', description: 'A JWT' } },
    key: { apiKeySecurityScheme: { location: 'header', name: 'x-api-key', description: 'An API key' } },
    code: {
      oauth2SecurityScheme: {
        flows: {
          authorizationCode: {
            authorizationUrl: 'https://id.example.com/auth',
            tokenUrl: 'https://id.example.com/token',
            scopes: { read: 'Read' },
            pkceRequired: true,
          },
        },
        oauth2MetadataUrl: 'https://id.example.com/.well-known/oauth-authorization-server',
      },
    },
    machine: { oauth2SecurityScheme: { flows: { clientCredentials: { tokenUrl: 'https://id.example.com/token', scopes: { write: 'Write' } } } } },
    device: {
      oauth2SecurityScheme: {
        flows: {
          deviceCode: { deviceAuthorizationUrl: 'https://id.example.com/device', tokenUrl: 'https://id.example.com/token', scopes: { read: 'Read' } },
        },
      },
    },
    oidc: { openIdConnectSecurityScheme: { openIdConnectUrl: 'https://id.example.com/.well-known/openid-configuration' } },
    mtls: { mtlsSecurityScheme: { description: 'Client certificates' } },
  },
  securityRequirements: [{ schemes: { bearer: { list: [] } } }, { schemes: { code: { list: ['read'] } } }],
  skills: [{ ...testCard.skills[0], examples: ['hi'], inputModes: ['text/plain'], securityRequirements: [{ schemes: { key: { list: [] } } }] }],
};
