import { clearToken } from '../api/auth-token';
import { useSession } from '../app/session-context';
import styles from './top-bar.module.css';

export function TopBar() {
  const session = useSession();
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
      {session.actor && <span className={styles.actor}>{session.actor}</span>}
      {session.auth === 'token' && (
        <button type="button" className={styles.signOut} onClick={() => clearToken()}>
          Sign out
        </button>
      )}
    </header>
  );
}
