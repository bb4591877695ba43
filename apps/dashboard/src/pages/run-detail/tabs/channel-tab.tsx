import type { ChannelMessage } from '../../../api/types';
import { JsonBlock } from '../../../components/json-block';
import { Panel } from '../../../components/panel';
import { TimeText } from '../../../components/time-text';
import styles from '../run-detail.module.css';

/** Messages by channel, in sequence order; the un-acked ones (not yet consumed) first. */
export function ChannelTab({ messages }: { messages: ChannelMessage[] }) {
  if (messages.length === 0) return <p className="muted">No message has been sent to this run.</p>;
  const channels = [...new Set(messages.map((m) => m.channel))].sort();
  return (
    <div className={styles.stack}>
      {channels.map((channel) => {
        const inChannel = messages.filter((m) => m.channel === channel).sort((a, b) => a.seq - b.seq);
        const unacked = inChannel.filter((m) => m.ackedAt === null);
        const acked = inChannel.filter((m) => m.ackedAt !== null);
        return (
          <Panel
            key={channel}
            testId="channel"
            title={
              <>
                channel <code>{channel}</code>
              </>
            }
            aside={
              <span className="muted">
                {unacked.length} un-acked · {acked.length} acked
              </span>
            }
            flush
          >
            <table>
              <thead>
                <tr>
                  <th>Seq</th>
                  <th>Key</th>
                  <th>State</th>
                  <th>Sent</th>
                  <th>Payload</th>
                </tr>
              </thead>
              <tbody>
                {[...unacked, ...acked].map((message) => (
                  <tr key={message.seq} className={message.ackedAt ? styles.acked : undefined} data-testid="message" data-seq={message.seq}>
                    <td className="mono">{message.seq}</td>
                    <td className="mono">{message.key}</td>
                    <td className={styles.nowrap}>
                      {message.ackedAt ? (
                        <>
                          acked <TimeText iso={message.ackedAt} />
                        </>
                      ) : (
                        <span className={styles.unacked}>un-acked</span>
                      )}
                    </td>
                    <td className={styles.nowrap}>
                      <TimeText iso={message.sentAt} mode="timestamp" />
                    </td>
                    <td className={styles.payloadCell}>
                      <JsonBlock value={message.payload} compact />
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </Panel>
        );
      })}
    </div>
  );
}
