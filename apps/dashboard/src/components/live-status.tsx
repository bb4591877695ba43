import { useEffect, useState } from 'react';
import { FALLBACK_POLL_MS, type LiveState, pauseLiveUpdates, resumeLiveUpdates, retryLiveUpdates, useLiveState } from '../api/live';
import { formatSpan, plural } from '../lib/format';
import styles from './live-status.module.css';

/**
 * The top bar's word on freshness: live (the server reports every change), paused by the operator, or
 * down (the pages poll meanwhile, and the stream is tried again); how long ago the data arrived, ticking;
 * and the pause toggle.
 */
export function LiveStatus() {
  const live = useLiveState();
  const now = useTick();
  const mode = live.paused ? 'paused' : live.mode;
  return (
    <div className={styles.status} data-testid="live-status" data-mode={mode}>
      <span className={styles.dot} aria-hidden="true" />
      <span role="status" className={styles.mode} title={explain(live, now)} data-testid="live-mode">
        {label(live)}
      </span>
      <span className={styles.freshness} data-testid="live-freshness">
        {freshness(live.updatedAt, now)}
      </span>
      {mode === 'down' && (
        <button type="button" className={styles.button} onClick={retryLiveUpdates} data-testid="live-retry">
          {live.retryAt === undefined ? 'Retrying…' : 'Retry now'}
        </button>
      )}
      {live.paused ? (
        <button
          type="button"
          className={styles.button}
          onClick={resumeLiveUpdates}
          title="Refresh what changed meanwhile, and keep up again"
          data-testid="live-resume"
        >
          Resume
        </button>
      ) : (
        <button
          type="button"
          className={styles.button}
          onClick={pauseLiveUpdates}
          title="Hold the lists and pages as they are; your own actions still show"
          data-testid="live-pause"
        >
          Pause
        </button>
      )}
    </div>
  );
}

function label(live: LiveState): string {
  if (live.paused) return live.changedWhilePaused ? `Paused · ${plural(live.changedWhilePaused, 'run')} changed` : 'Paused';
  if (live.mode === 'live') return 'Live';
  if (live.mode === 'connecting') return 'Connecting…';
  return `Live updates unavailable, refreshing every ${FALLBACK_POLL_MS / 1_000} s`;
}

function explain(live: LiveState, now: number): string {
  if (live.paused) return 'Updates are paused: nothing refreshes by itself until you resume.';
  if (live.mode === 'live') return 'Live: the server reports every change to a run as it happens.';
  if (live.mode === 'connecting') return 'Opening the stream of changes; the pages poll meanwhile.';
  const next = live.retryAt === undefined ? 'trying again now' : `trying again in ${formatSpan(Math.max(0, live.retryAt - now) + 999)}`;
  return `The stream of changes failed (${live.problem ?? 'unknown'}); ${next}. Meanwhile the pages refresh every ${FALLBACK_POLL_MS / 1_000} s.`;
}

function freshness(updatedAt: number | undefined, now: number): string {
  if (updatedAt === undefined) return '';
  const age = Math.max(0, now - updatedAt);
  return age < 1_000 ? 'updated just now' : `updated ${formatSpan(age)} ago`;
}

/** This browser's clock, re-read every second: the freshness and the retry count down. */
function useTick(): number {
  const [now, setNow] = useState(Date.now);
  useEffect(() => {
    const timer = setInterval(() => setNow(Date.now()), 1_000);
    return () => clearInterval(timer);
  }, []);
  return now;
}
