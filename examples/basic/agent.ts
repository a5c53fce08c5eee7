/**
 * A small travel agent: greets with a direct Message, books a flight over two turns
 * (asks for the date, then completes with an itinerary artifact), and honours cancellation.
 */
import type { AgentExecutor } from 'a2a-express-kit';

export const travelAgent: AgentExecutor = {
  async execute(ctx, events) {
    if (ctx.task?.status.state === 'TASK_STATE_INPUT_REQUIRED') {
      // Turn 2: the date the user gave.
      await events.start(`Booking your flight for ${ctx.userText}...`);
      await events.artifact({ name: 'itinerary', text: `Flight booked for ${ctx.userText}. Seat 14A.` });
      await events.complete('Your flight is booked.');
      return;
    }
    if (/book/i.test(ctx.userText)) {
      await events.requireInput('Which day would you like to fly?');
      return;
    }
    if (/slow|count/i.test(ctx.userText)) {
      // A longer task that streams progress and stops when canceled.
      await events.start('Counting...');
      for (let i = 1; i <= 5 && !ctx.signal.aborted; i++) {
        await new Promise((resolve) => setTimeout(resolve, 200));
        await events.progress(`${i}`);
      }
      if (ctx.signal.aborted) return;
      await events.complete('Done counting.');
      return;
    }
    await events.reply(`Hello! You said: ${ctx.userText}. Ask me to "book a flight".`);
  },
  async cancel(_ctx, events) {
    await events.canceled('Stopped at your request.');
  },
};
