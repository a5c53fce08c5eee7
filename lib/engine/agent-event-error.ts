/** Raised to an executor whose event the engine refused (wrong task, after the end, illegal transition). */
export class InvalidAgentEventError extends Error {
  constructor(message: string) {
    super(`Invalid agent event: ${message}`);
    this.name = 'InvalidAgentEventError';
  }
}
