import type { MessageQueue } from '#lib/kernel/ports';

/**
 * A queue port whose target a test chooses: handlers are built once with it (`ports: { queue }`), and
 * each test points it at the in-process queue it wants (fast retries, a queue that refuses messages).
 */
export interface SwitchableQueue extends MessageQueue {
  use(queue: MessageQueue): void;
}

export function switchableQueue(): SwitchableQueue {
  let target: MessageQueue | undefined;
  return {
    send: (name, body, options) => {
      if (!target) throw new Error('No queue chosen for this test; call use(queue) first');
      return target.send(name, body, options);
    },
    use: (queue) => {
      target = queue;
    },
  };
}

/** The queue of the handlers tests/support builds (tasks); test files choose its target. */
export const testQueue = switchableQueue();
