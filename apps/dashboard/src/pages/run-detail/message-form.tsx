import { type FormEvent, useId, useMemo, useRef, useState } from 'react';
import { isApiError } from '../../api/client';
import { useSendMessage } from '../../api/run-actions';
import type { RunDetail } from '../../api/types';
import { useWorkflow } from '../../api/workflows';
import { useShortcut } from '../../app/shortcuts';
import { Button } from '../../components/button';
import { ErrorBox } from '../../components/error-box';
import { Field } from '../../components/field';
import { checkDraft, initialDraft, PayloadEditor, type PayloadDraft } from '../../components/payload-editor';
import { awaitedNames } from '../../lib/awaited-names';
import styles from './run-detail.module.css';

/**
 * Sends a channel message. The key is the dedup key: sending the same (channel, key) again is a
 * no-op, so an operator can safely retry a send that seemed to fail. The payload is a form generated
 * from the channel's JSON Schema when it declares one (the raw JSON a toggle away), as for a signal.
 */
export function MessageForm({ detail }: { detail: RunDetail }) {
  const { run } = detail;
  const workflow = useWorkflow(run.workflow);
  const send = useSendMessage();
  const listId = useId();
  const declared = workflow?.channels ?? [];
  const [waitingOn] = awaitedNames(run.waiting, 'channel');
  const [picked, setPicked] = useState<string | null>(null);
  const channel = picked ?? waitingOn ?? declared[0]?.name ?? '';
  const [key, setKey] = useState('');
  const schema = declared.find((c) => c.name === channel)?.jsonSchema;
  const [edited, setEdited] = useState<{ channel: string; draft: PayloadDraft } | null>(null);
  const opened = useMemo(() => initialDraft(schema), [schema]);
  const draft = edited?.channel === channel ? edited.draft : opened;
  const check = checkDraft(draft, schema);
  const canSend = Boolean(channel.trim()) && Boolean(key.trim()) && check.valid && !send.isPending;

  // `m`: to the dedup key when the channel is known (each message needs a new key), else to the channel.
  const channelField = useRef<HTMLInputElement>(null);
  const keyField = useRef<HTMLInputElement>(null);
  useShortcut({ keys: 'm', label: 'Send a channel message: go to its form', group: 'This run' }, () =>
    (channel ? keyField : channelField).current?.focus(),
  );

  const edit = (apply: () => void) => {
    send.reset();
    apply();
  };
  const submit = (event: FormEvent) => {
    event.preventDefault();
    if (!canSend) return;
    send.mutate(
      { runId: run.runId, channel: channel.trim(), key: key.trim(), payload: check.value },
      // The next message needs a new key; the channel stays.
      {
        onSuccess: () => {
          setKey('');
          setEdited(null);
        },
      },
    );
  };

  return (
    <form className={styles.form} onSubmit={submit} data-testid="message-form">
      <div className={styles.formRow}>
        <Field label="Channel">
          <input
            ref={channelField}
            value={channel}
            list={listId}
            placeholder="channel"
            maxLength={200}
            onChange={(e) => edit(() => setPicked(e.target.value))}
            className="mono"
            data-testid="message-channel"
          />
          <datalist id={listId}>
            {declared.map((c) => (
              <option key={c.name} value={c.name} />
            ))}
          </datalist>
        </Field>
        <Field label="Key (dedup)">
          <input
            ref={keyField}
            value={key}
            placeholder="e.g. evt-42"
            maxLength={200}
            onChange={(e) => edit(() => setKey(e.target.value))}
            className="mono"
            data-testid="message-key"
          />
        </Field>
      </div>
      <PayloadEditor
        schema={schema}
        draft={draft}
        onChange={(next) => edit(() => setEdited({ channel, draft: next }))}
        testIdPrefix="message"
        serverIssues={isApiError(send.error) ? send.error.issues : undefined}
        rows={4}
      />
      <ErrorBox issues={draft.touched && draft.mode === 'json' ? check.issues : []} error={send.error} testId="message-error" />
      {send.data && (
        <p className={styles.success} data-testid="message-result">
          {send.data.accepted
            ? `Sent to ${send.data.channel} as message #${send.data.seq}.`
            : `Key ${send.data.key} was already sent (message #${send.data.seq}): ignored.`}
        </p>
      )}
      <div className={styles.formFooter}>
        <Button type="submit" variant="primary" disabled={!canSend} data-testid="message-send">
          {send.isPending ? 'Sending…' : 'Send message'}
        </Button>
      </div>
    </form>
  );
}
