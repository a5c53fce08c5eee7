import type { AgentCardInput } from 'a2a-express-kit';

/** The public card. supportedInterfaces is left out: the router fills in the URL it is mounted at. */
export const travelAgentCard: AgentCardInput = {
  name: 'Travel Agent',
  description: 'Books flights in two turns and streams its progress.',
  version: '1.0.0',
  capabilities: { streaming: true, pushNotifications: false },
  defaultInputModes: ['text/plain'],
  defaultOutputModes: ['text/plain'],
  skills: [
    {
      id: 'book-flight',
      name: 'Book a flight',
      description: 'Asks for the date, then books the flight.',
      tags: ['travel'],
      examples: ['book a flight to Lisbon'],
    },
  ],
};
