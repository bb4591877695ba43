import { hrefFor, useHashLocation } from '../app/router';
import styles from './side-nav.module.css';

const links = [
  { id: 'overview', label: 'Overview', path: '/', active: (p: string) => p === '/' },
  { id: 'runs', label: 'Runs', path: '/runs', active: (p: string) => p.startsWith('/runs') },
  { id: 'workflows', label: 'Workflows', path: '/workflows', active: (p: string) => p.startsWith('/workflows') },
  { id: 'schedules', label: 'Schedules', path: '/schedules', active: (p: string) => p.startsWith('/schedules') },
  { id: 'queues', label: 'Queues', path: '/queues', active: (p: string) => p.startsWith('/queues') },
];

export function SideNav() {
  const { path } = useHashLocation();
  return (
    <nav className={styles.nav} aria-label="Main">
      {links.map((link) => {
        const active = link.active(path);
        return (
          <a
            key={link.id}
            href={hrefFor(link.path)}
            className={active ? `${styles.link} ${styles.active}` : styles.link}
            aria-current={active ? 'page' : undefined}
            data-testid={`nav-${link.id}`}
          >
            {link.label}
          </a>
        );
      })}
    </nav>
  );
}
