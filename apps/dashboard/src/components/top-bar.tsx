import { clearToken } from '../api/auth-token';
import { useSession } from '../app/session-context';
import { useShortcutsHelp } from '../app/shortcuts';
import { operatorZone } from '../lib/time';
import { LiveStatus } from './live-status';
import styles from './top-bar.module.css';

export function TopBar() {
  const session = useSession();
  const help = useShortcutsHelp();
  return (
    <header className={styles.bar}>
      <a className={styles.brand} href="#/">
        nestjs-durable
      </a>
      <span className={styles.tagline}>workflows</span>
      {session.readOnly && (
        <span className={styles.readOnly} data-testid="read-only" title="The server is in read-only mode: inspect only, no actions.">
          read-only
        </span>
      )}
      <span className={styles.spacer} />
      <LiveStatus />
      <span className={styles.zone} title="Times are shown in this zone; hover one for its UTC instant." data-testid="time-zone">
        {operatorZone()}
      </span>
      {session.actor && <span className={styles.actor}>{session.actor}</span>}
      <button
        type="button"
        className={styles.chromeButton}
        onClick={help.toggle}
        aria-label="Keyboard shortcuts"
        title="Keyboard shortcuts (?)"
        data-testid="shortcuts-button"
      >
        ?
      </button>
      {session.auth === 'token' && (
        <button type="button" className={styles.chromeButton} onClick={() => clearToken()}>
          Sign out
        </button>
      )}
    </header>
  );
}
