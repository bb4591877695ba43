/** One server-sent event: its type (`message` when the stream names none) and its data lines joined by `\n`. */
export interface SseEvent {
  type: string;
  data: string;
  /** The last `id:` the stream gave, if any. */
  id?: string;
}

/**
 * Reads the `text/event-stream` format (the HTML standard's event stream interpretation) from text
 * chunks as they arrive, for a stream read with `fetch` (EventSource cannot send an Authorization
 * header). A field per line (`event:`, `data:`, `id:`; `retry:` and `:` comments are skipped), an event
 * per blank line. Lines end in `\n`, `\r\n` or `\r`, and a line, even its `\r\n`, may be split across chunks.
 */
export class SseParser {
  private buffer = '';
  private started = false;
  private type = '';
  private data: string[] = [];
  private id: string | undefined;

  constructor(private readonly onEvent: (event: SseEvent) => void) {}

  push(chunk: string): void {
    this.buffer += chunk;
    if (!this.started && this.buffer.length) {
      this.started = true;
      if (this.buffer.startsWith('\uFEFF')) this.buffer = this.buffer.slice(1);
    }
    let start = 0;
    for (let i = 0; i < this.buffer.length; i++) {
      const c = this.buffer[i];
      if (c !== '\n' && c !== '\r') continue;
      // A `\r` at the end of the chunk may be the first half of a `\r\n`: wait for the next chunk.
      if (c === '\r' && i === this.buffer.length - 1) break;
      this.line(this.buffer.slice(start, i));
      if (c === '\r' && this.buffer[i + 1] === '\n') i++;
      start = i + 1;
    }
    this.buffer = this.buffer.slice(start);
  }

  private line(line: string): void {
    if (line === '') return this.dispatch();
    if (line.startsWith(':')) return; // a comment
    const colon = line.indexOf(':');
    const field = colon < 0 ? line : line.slice(0, colon);
    let value = colon < 0 ? '' : line.slice(colon + 1);
    if (value.startsWith(' ')) value = value.slice(1);
    if (field === 'event') this.type = value;
    else if (field === 'data') this.data.push(value);
    else if (field === 'id' && !value.includes('\0')) this.id = value;
  }

  private dispatch(): void {
    const { type, data } = this;
    this.type = '';
    this.data = [];
    if (!data.length) return; // an event without data is not dispatched
    this.onEvent({ type: type || 'message', data: data.join('\n'), ...(this.id !== undefined && { id: this.id }) });
  }
}
