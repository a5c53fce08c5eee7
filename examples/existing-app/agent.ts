/**
 * The agent: files an expense over two turns. It reads who is asking, for which company and in
 * which request from getA2ARequestContext(), which the middlewares filled in for this message.
 */
import { getA2ARequestContext, type AgentExecutor } from 'a2a-express-kit';

/** One line of the app's audit trail, written for every turn. */
export interface AuditEntry {
  readonly taskId: string;
  readonly turn: 'ask' | 'file' | 'chat';
  readonly user: string;
  readonly tenant: string;
  readonly requestId: string | undefined;
}

export function createExpenseAgent(audit: (entry: AuditEntry) => void): AgentExecutor {
  return {
    async execute(ctx, events) {
      // The same values as ctx.caller / ctx.tenant, readable anywhere below execute() (a service,
      // a repository, a logger) without passing them along.
      const { caller, tenant, requestId } = getA2ARequestContext();
      const name = caller.displayName ?? caller.id;

      if (ctx.task?.status.state === 'TASK_STATE_INPUT_REQUIRED') {
        audit({ taskId: ctx.taskId, turn: 'file', user: caller.id, tenant, requestId });
        await events.start(`Filing "${ctx.userText}"...`);
        await events.artifact({
          name: 'expense',
          text: `Expense "${ctx.userText}" filed for ${name} at ${tenant}.`,
          metadata: { filedBy: caller.id, tenant, requestId: requestId ?? '' },
        });
        await events.complete('Filed. Anything else?');
        return;
      }
      if (/expense/i.test(ctx.userText)) {
        audit({ taskId: ctx.taskId, turn: 'ask', user: caller.id, tenant, requestId });
        await events.requireInput(`Sure, ${name}: how much, and what for?`);
        return;
      }
      audit({ taskId: ctx.taskId, turn: 'chat', user: caller.id, tenant, requestId });
      await events.reply(`Hi ${name}, you are working in ${tenant}. Say "file an expense" to start.`);
    },
  };
}
