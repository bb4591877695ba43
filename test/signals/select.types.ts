/*
 * Type test of ctx.select, checked by `npm run typecheck` (tsc over test/): each arm's value type is
 * inferred from its builder, a wrong use is a compile error (each @ts-expect-error must meet one).
 */
import { ChildEnd, ChildHandle, ChannelMessage, defineChannel, defineSignal, WorkflowContext } from 'nestjs-durable';

const Approval = defineSignal<{ by: string }>('approval');
const Carrier = defineChannel<{ status: 'picked' | 'delivered' }>('carrier');

export async function selectTypes(ctx: WorkflowContext, parcel: ChildHandle<number>): Promise<void> {
  const won = await ctx.select('decision', {
    approved: ctx.signal(Approval),
    reason: ctx.signal<string>('rejected'),
    shipped: ctx.message(Carrier),
    reminder: ctx.timer('2h'),
    parcel,
  });
  switch (won.key) {
    case 'approved': {
      const by: string = won.value.by;
      // @ts-expect-error: the payload has no such field
      void won.value.amount;
      void by;
      break;
    }
    case 'reason': {
      const text: string = won.value;
      void text;
      break;
    }
    case 'shipped': {
      const message: ChannelMessage<{ status: 'picked' | 'delivered' }> = won.value;
      void message.payload.status;
      break;
    }
    case 'reminder': {
      const at: Date = won.value;
      void at;
      break;
    }
    case 'parcel': {
      const end: ChildEnd<number> = won.value;
      if (end.status === 'completed') {
        const n: number = end.output;
        void n;
      } else void end.error.message;
      break;
    }
    case 'deadline':
      // @ts-expect-error: the deadline carries no value
      void won.value;
      break;
    default: {
      // Every key is handled above: nothing is left.
      const none: never = won;
      void none;
    }
  }
  // @ts-expect-error: an arm must be built by ctx.signal, ctx.message or ctx.timer, or be a child handle
  await ctx.select('bad', { a: 'approval' });
}
