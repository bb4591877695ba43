import type { ReactNode } from 'react';
import styles from './page-layout.module.css';

interface PageLayoutProps {
  title: ReactNode;
  /** Beside the title, muted ("3 declared"). */
  note?: ReactNode;
  /** The page this one belongs to, as a breadcrumb before the title (the title then in monospace: a name). */
  parent?: { href: string; label: string };
  /** At the heading's right end: a control over the whole page (the runs table's columns). */
  aside?: ReactNode;
  children: ReactNode;
}

/** A page: its title (after its parent, if any) with a note beside it, then its content in a column. */
export function PageLayout({ title, note, parent, aside, children }: PageLayoutProps) {
  return (
    <div className={styles.page}>
      <div className={styles.heading}>
        {parent && (
          <>
            <a href={parent.href}>{parent.label}</a>
            <span className="muted">/</span>
          </>
        )}
        <h1 className={parent ? 'mono' : undefined}>{title}</h1>
        {note !== undefined && <span className="muted">{note}</span>}
        {aside && <div className={styles.aside}>{aside}</div>}
      </div>
      {children}
    </div>
  );
}
