import { AppShell } from '../components/app-shell';
import { Providers } from './providers';
import { Routes } from './routes';
import { SessionGate } from './session-gate';

export function App() {
  return (
    <Providers>
      <SessionGate>
        <AppShell>
          <Routes />
        </AppShell>
      </SessionGate>
    </Providers>
  );
}
