import { SseEvent, SseParser } from '../../apps/dashboard/src/lib/sse';

// The dashboard reads GET /api/events with fetch (it must send the Authorization header, which
// EventSource cannot), so it parses the event stream itself.

const parse = (...chunks: string[]): SseEvent[] => {
  const events: SseEvent[] = [];
  const parser = new SseParser((event) => events.push(event));
  for (const chunk of chunks) parser.push(chunk);
  return events;
};

describe('the dashboard reads server-sent events', () => {
  it('reads the events the dashboard API sends: ready, runs with their ids, ping', () => {
    expect(parse('event: ready\ndata: {}\n\nevent: runs\ndata: {"runIds":["a","b/c"]}\n\nevent: ping\ndata: {}\n\n')).toEqual([
      { type: 'ready', data: '{}' },
      { type: 'runs', data: '{"runIds":["a","b/c"]}' },
      { type: 'ping', data: '{}' },
    ]);
  });

  it('puts an event together from chunks split anywhere, a \\r\\n split between two included', () => {
    const stream = 'event: runs\r\nid: 7\r\ndata: {"runIds":["x"]}\r\n\r\nevent: ping\rdata: {}\r\r\n';
    const whole = parse(stream);
    expect(whole).toEqual([
      { type: 'runs', data: '{"runIds":["x"]}', id: '7' },
      { type: 'ping', data: '{}', id: '7' },
    ]);
    for (let cut = 1; cut < stream.length; cut++) expect(parse(stream.slice(0, cut), stream.slice(cut))).toEqual(whole);
    expect(parse(...stream.split(''))).toEqual(whole);
  });

  it('joins data lines, skips comments and unknown fields, names an untyped event "message", and dispatches nothing without data', () => {
    expect(parse(':ok\n\nretry: 100\nfoo: bar\ndata: one\ndata:two\ndata\n\nevent: empty\n\n')).toEqual([
      { type: 'message', data: 'one\ntwo\n' },
    ]);
  });

  it('waits for the blank line: an event cut short by the end of what has arrived is not dispatched yet', () => {
    const events: SseEvent[] = [];
    const parser = new SseParser((event) => events.push(event));
    parser.push('\uFEFFevent: runs\ndata: {"runIds":[]}\n');
    expect(events).toEqual([]);
    parser.push('\n');
    expect(events).toEqual([{ type: 'runs', data: '{"runIds":[]}' }]);
  });
});
