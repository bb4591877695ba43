import { type FormEvent, useState } from 'react';
import { getOperator, setOperator, setToken } from '../../api/auth-token';
import { Button } from '../../components/button';
import { Field } from '../../components/field';
import styles from './login.module.css';

/**
 * Asks for the dashboard token (DashboardOptions `auth: { token }`). It is kept in sessionStorage
 * and sent as a bearer token; the server's first 401 brings the operator back here. A shared token
 * does not say who holds it, so the operator's name is asked too: the history records it as who acted.
 */
export function LoginPage({ notice }: { notice: string | null }) {
  const [token, setDraft] = useState('');
  const [name, setName] = useState(() => getOperator() ?? '');
  const submit = (event: FormEvent) => {
    event.preventDefault();
    if (!token.trim()) return;
    setOperator(name.trim());
    setToken(token.trim());
  };
  return (
    <main className={styles.page}>
      <form className={styles.card} onSubmit={submit}>
        <div className={styles.brand}>nestjs-durable</div>
        <h1 className={styles.title}>Sign in to the dashboard</h1>
        <p className="muted">This dashboard is protected by a token. Ask whoever runs the application for it.</p>
        {notice && (
          <p className={styles.notice} role="alert">
            {notice}
          </p>
        )}
        <Field label="Token">
          <input
            type="password"
            autoComplete="current-password"
            autoFocus
            value={token}
            onChange={(event) => setDraft(event.target.value)}
            data-testid="login-token"
          />
        </Field>
        <Field label="Your name" hint="Recorded in each run's history as who acted.">
          <input
            type="text"
            autoComplete="name"
            maxLength={100}
            value={name}
            onChange={(event) => setName(event.target.value)}
            data-testid="login-operator"
          />
        </Field>
        <Button type="submit" variant="primary" disabled={!token.trim()} data-testid="login-submit">
          Sign in
        </Button>
      </form>
    </main>
  );
}
