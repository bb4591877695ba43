import type { SseEvent } from '../lib/sse';

// One event stream for every tab of a dashboard in a browser. Browsers open at most six connections
// to a host over HTTP/1.1, and a stream held open per tab took them all: with six tabs open, the
// seventh's requests waited forever. The tab holding a Web Lock named for the dashboard's path reads
// the stream and passes on what it reads over a BroadcastChannel of the same name; the other tabs
// listen there, and one of them takes the lock (and the stream) when that tab closes or signs out.
// Web Locks exist only in secure contexts (HTTPS, localhost): elsewhere each tab reads its own stream.

/** The stream's state in the tab that reads it, as the other tabs show it. */
export interface SharedStreamState {
  mode: 'connecting' | 'live' | 'down';
  problem?: string;
  retryAt?: number;
}

type Message = { type: 'event'; event: SseEvent } | { type: 'state'; state: SharedStreamState } | { type: 'hello' } | { type: 'retry' };

export interface ShareHandlers {
  /** This tab now reads the stream for every tab. */
  lead(): void;
  /** The reading tab read this event. */
  event(event: SseEvent): void;
  /** The stream's state in the reading tab changed (or a new tab asked for it). */
  state(state: SharedStreamState): void;
  /** Heard by the reading tab: an operator in another tab asked to try the stream again now. */
  retry(): void;
  /** Heard by the reading tab: its state, for a tab that has just opened. */
  current(): SharedStreamState;
}

export class StreamShare {
  /** Whether this browser context can share the stream between tabs. */
  static available(): boolean {
    return typeof BroadcastChannel !== 'undefined' && typeof navigator !== 'undefined' && navigator.locks !== undefined;
  }

  /** Whether this tab reads the stream for the others. */
  leading = false;
  private readonly channel: BroadcastChannel;
  private readonly abort = new AbortController();
  private release: (() => void) | undefined;

  constructor(private readonly handlers: ShareHandlers) {
    const name = `nestjs-durable-live:${location.pathname}`;
    this.channel = new BroadcastChannel(name);
    this.channel.onmessage = ({ data }: MessageEvent<Message>) => this.receive(data);
    navigator.locks
      .request(name, { signal: this.abort.signal }, () => {
        if (this.abort.signal.aborted) return undefined; // closed as its turn came: the lock goes on to the next tab
        this.leading = true;
        handlers.lead();
        return new Promise<void>((resolve) => (this.release = resolve)); // held until close()
      })
      .catch(() => undefined); // closed before this tab's turn came
    this.post({ type: 'hello' });
  }

  /** The reading tab: passes an event on to the other tabs. */
  shareEvent(event: SseEvent): void {
    if (this.leading) this.post({ type: 'event', event });
  }

  /** The reading tab: tells the other tabs the stream's state. */
  shareState(state: SharedStreamState): void {
    if (this.leading) this.post({ type: 'state', state });
  }

  /** Another tab: asks the reading tab to try the stream again now. */
  requestRetry(): void {
    this.post({ type: 'retry' });
  }

  /** Leaves the share: the lock goes to the next tab waiting for it, which opens the stream. */
  close(): void {
    this.leading = false;
    this.abort.abort();
    this.release?.();
    this.channel.close();
  }

  private receive(message: Message): void {
    if (this.leading) {
      if (message.type === 'hello') this.shareState(this.handlers.current());
      else if (message.type === 'retry') this.handlers.retry();
    } else if (message.type === 'event') this.handlers.event(message.event);
    else if (message.type === 'state') this.handlers.state(message.state);
  }

  private post(message: Message): void {
    this.channel.postMessage(message);
  }
}
