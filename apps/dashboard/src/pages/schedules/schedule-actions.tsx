import { useState } from 'react';
import { isApiError } from '../../api/client';
import { usePauseSchedule, useResumeSchedule, useTriggerSchedule } from '../../api/schedules';
import type { BackfillResult, Schedule } from '../../api/types';
import { useCanMutate } from '../../app/session-context';
import { Button } from '../../components/button';
import { ErrorBox } from '../../components/error-box';
import { RunLink } from '../../components/run-link';
import { plural } from '../../lib/format';
import { BackfillDialog } from './backfill-dialog';
import styles from './schedules.module.css';

/** What an operator may ask for when the overlap policy refused a trigger. */
const OVERRIDES = [
  { overlap: 'allow', testId: 'trigger-beside', label: 'Start one beside it' },
  { overlap: 'cancelOther', testId: 'trigger-replace', label: 'Cancel it and start one' },
] as const;

/** Pause or resume, trigger one run now, backfill a range (previewed, then confirmed). */
export function ScheduleActions({ schedule }: { schedule: Schedule }) {
  const canMutate = useCanMutate();
  const pause = usePauseSchedule();
  const resume = useResumeSchedule();
  const trigger = useTriggerSchedule();
  const [backfilling, setBackfilling] = useState(false);
  const [backfilled, setBackfilled] = useState<BackfillResult | null>(null);
  const busy = pause.isPending || resume.isPending || trigger.isPending;
  const overlapping =
    isApiError(trigger.error) && trigger.error.code === 'SCHEDULE_OVERLAP'
      ? (trigger.error.details as { runId: string; status: string; expected?: string })
      : null;
  const actions = [pause, resume, trigger];
  // One outcome on screen at a time: each action clears the others' before it runs.
  const reset = () => {
    actions.forEach((action) => action.reset());
    setBackfilled(null);
  };

  // A held schedule (no instance executes its workflow) reads paused: its operator's pause is the one these change.
  const held = schedule.workflowMissing
    ? ' It is held too, its workflow executed by no live instance: it fires (and catches up by its policy) only once one does.'
    : '';
  const pauseOrResume = schedule.operatorPaused
    ? {
        testId: 'schedule-resume',
        title: `Fire again from the next slot; the slots passed while paused stay skipped.${held}`,
        label: resume.isPending ? 'Resuming…' : 'Resume',
        run: () => resume.mutate(schedule.name),
      }
    : {
        testId: 'schedule-pause',
        title: `Start no run until resumed; each slot meanwhile is recorded as skipped (paused). Kept across restarts and deploys.${held}`,
        label: pause.isPending ? 'Pausing…' : 'Pause',
        run: () => pause.mutate(schedule.name),
      };
  const buttons = [
    pauseOrResume,
    {
      testId: 'schedule-trigger',
      title: `Start one run now, outside the slots, under the overlap policy (${schedule.overlap}) if the last run is unfinished.`,
      label: trigger.isPending ? 'Triggering…' : 'Trigger now',
      run: () => trigger.mutate({ name: schedule.name }),
    },
    {
      testId: 'schedule-backfill',
      title: 'Start a run for each slot of a past range that has none.',
      label: 'Backfill…',
      run: () => setBackfilling(true),
    },
  ];

  if (!canMutate)
    return (
      <div className={styles.actionGroup}>
        <span className="muted">The dashboard is read-only: actions are disabled on this server.</span>
      </div>
    );
  return (
    <div className={styles.actionGroup}>
      <div className={styles.actions}>
        {buttons.map((button) => (
          <Button
            key={button.testId}
            small
            disabled={busy}
            title={button.title}
            onClick={() => {
              reset();
              button.run();
            }}
            data-testid={button.testId}
          >
            {button.label}
          </Button>
        ))}
      </div>
      <ErrorBox error={pause.error ?? resume.error ?? trigger.error} testId="schedule-action-error" />
      {overlapping && (
        // The policy refused: the operator may still start one beside the unfinished run, or replace it.
        <div className={styles.actions} data-testid="trigger-overlap">
          <span>
            Last run <RunLink runId={overlapping.runId} /> is {overlapping.status}
            {overlapping.expected && (
              <span data-testid="trigger-overlap-changed">
                {' '}
                (it changed since you looked: <RunLink runId={overlapping.expected} /> was the last run, and nothing was done)
              </span>
            )}
            .
          </span>
          {OVERRIDES.map(({ overlap, testId, label }) => (
            <Button
              key={overlap}
              small
              disabled={busy}
              onClick={() => {
                reset();
                // Meant for the run shown: if another has become the last run meanwhile, the server refuses, naming it.
                trigger.mutate({ name: schedule.name, overlap, expectLastRun: overlapping.runId });
              }}
              data-testid={testId}
            >
              {label}
            </Button>
          ))}
        </div>
      )}
      {trigger.data && (
        <p className={styles.result} data-testid="trigger-result">
          Started <RunLink runId={trigger.data.runId} />
        </p>
      )}
      {backfilled && (
        <p className={styles.result} data-testid="backfill-result" data-started={backfilled.started}>
          Backfill started {plural(backfilled.started, 'run')}
          {backfilled.skipped > 0 && `, skipped ${plural(backfilled.skipped, 'slot')}`}.
        </p>
      )}
      {backfilling && (
        <BackfillDialog
          schedule={schedule}
          onDone={(result) => {
            setBackfilling(false);
            setBackfilled(result);
          }}
          onClose={() => setBackfilling(false)}
        />
      )}
    </div>
  );
}
