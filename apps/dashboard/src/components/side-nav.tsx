import { hrefFor, navigate, useHashLocation } from '../app/router';
import { Shortcut } from '../app/shortcuts';
import styles from './side-nav.module.css';

const links = [
  { id: 'overview', label: 'Overview', path: '/', keys: 'g o', active: (p: string) => p === '/' },
  { id: 'runs', label: 'Runs', path: '/runs', keys: 'g r', active: (p: string) => p.startsWith('/runs') },
  { id: 'workflows', label: 'Workflows', path: '/workflows', keys: 'g w', active: (p: string) => p.startsWith('/workflows') },
  { id: 'schedules', label: 'Schedules', path: '/schedules', keys: 'g s', active: (p: string) => p.startsWith('/schedules') },
  { id: 'queues', label: 'Queues', path: '/queues', keys: 'g q', active: (p: string) => p.startsWith('/queues') },
];

/** The pages, each also reached by `g` then its letter. */
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
            title={`${link.label} (keys: ${link.keys.replace(' ', ' then ')})`}
            data-testid={`nav-${link.id}`}
          >
            {link.label}
            <Shortcut
              keys={link.keys}
              label={`Go to ${link.label.toLowerCase()}`}
              group="Anywhere"
              global
              run={() => navigate(hrefFor(link.path))}
            />
          </a>
        );
      })}
    </nav>
  );
}
