import type { AgentCardInput } from 'a2a-express-kit';

/**
 * The public card, served without credentials. It tells clients to send the app's bearer JWT;
 * supportedInterfaces is left out: the router fills in the URL it is mounted at.
 */
export const expenseAgentCard: AgentCardInput = {
  name: 'Expense Assistant',
  description: 'Files expenses for signed-in employees, per company (tenant), in two turns.',
  version: '1.0.0',
  capabilities: { streaming: true, pushNotifications: false },
  defaultInputModes: ['text/plain'],
  defaultOutputModes: ['text/plain'],
  securitySchemes: { bearer: { httpAuthSecurityScheme: { scheme: 'Bearer', bearerFormat: 'JWT' } } },
  securityRequirements: [{ schemes: { bearer: { list: [] } } }],
  skills: [
    {
      id: 'file-expense',
      name: 'File an expense',
      description: 'Asks what the expense is, then files it under your name in your company.',
      tags: ['expenses'],
      examples: ['file an expense'],
    },
  ],
};
