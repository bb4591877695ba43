import type { ReactNode } from 'react';
import styles from './app-shell.module.css';
import { SideNav } from './side-nav';
import { TopBar } from './top-bar';

/** Top bar over a fixed left nav and the scrolling page. */
export function AppShell({ children }: { children: ReactNode }) {
  return (
    <div className={styles.shell}>
      <TopBar />
      <SideNav />
      <main className={styles.main}>{children}</main>
    </div>
  );
}
