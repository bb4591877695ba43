import { useQueryClient } from '@tanstack/react-query';
import { type ReactNode, useEffect } from 'react';
import { startLiveUpdates } from '../api/live';
import { hrefFor, navigate } from '../app/router';
import { requestFocus, ShortcutsProvider, useShortcut, useShortcutsHelp } from '../app/shortcuts';
import styles from './app-shell.module.css';
import { ShortcutsHelp } from './shortcuts-help';
import { SideNav } from './side-nav';
import { TopBar } from './top-bar';

/**
 * Top bar over a fixed left nav and the scrolling page; the nav moves under the bar on a narrow screen.
 * Rendered once signed in, it keeps the live updates (api/live.ts) running while the page is open.
 */
export function AppShell({ children }: { children: ReactNode }) {
  const queryClient = useQueryClient();
  useEffect(() => startLiveUpdates(queryClient), [queryClient]);
  return (
    <ShortcutsProvider>
      <div className={styles.shell}>
        <TopBar />
        <SideNav />
        <main className={styles.main}>{children}</main>
      </div>
      <GlobalShortcuts />
      <ShortcutsHelp />
    </ShortcutsProvider>
  );
}

/** The shortcuts that work on every page (the nav's `g …` are the side nav's own). */
function GlobalShortcuts() {
  const help = useShortcutsHelp();
  useShortcut({ keys: '?', label: 'Show the keyboard shortcuts', group: 'Anywhere' }, help.toggle, { global: true });
  useShortcut(
    { keys: '/', label: 'Search the runs (id prefix or keys)', group: 'Anywhere' },
    () => {
      // The runs page binds `/` itself; from any other page, go there and focus its search.
      requestFocus('runs-search');
      navigate(hrefFor('/runs'));
    },
    { global: true },
  );
  return null;
}
