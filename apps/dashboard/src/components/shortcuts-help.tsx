import { Fragment } from 'react';
import { useShortcutsHelp } from '../app/shortcuts';
import { Button } from './button';
import { Modal } from './modal';
import styles from './shortcuts-help.module.css';

/** The `?` overlay: the shortcuts that work on this page now, by group. */
export function ShortcutsHelp() {
  const help = useShortcutsHelp();
  if (!help.open) return null;
  return (
    <Modal
      title="Keyboard shortcuts"
      onClose={help.close}
      footer={
        <Button onClick={help.close} data-testid="shortcuts-close">
          Close
        </Button>
      }
    >
      <div className={styles.groups} data-testid="shortcuts-help">
        {help.groups().map(([group, shortcuts]) => (
          <section key={group}>
            <h3 className={styles.group}>{group}</h3>
            <dl className={styles.list}>
              {shortcuts.map((shortcut) => (
                <div key={shortcut.keys} className={styles.row} data-testid="shortcut" data-keys={shortcut.keys}>
                  <dt>
                    <Keys keys={shortcut.keys} />
                  </dt>
                  <dd>{shortcut.label}</dd>
                </div>
              ))}
            </dl>
          </section>
        ))}
        <p className="muted">Shortcuts do nothing while you type in a field; Escape leaves a dialog.</p>
      </div>
    </Modal>
  );
}

function Keys({ keys }: { keys: string }) {
  const parts = keys.split(' ');
  return (
    <>
      {parts.map((key, i) => (
        <Fragment key={i}>
          {i > 0 && <span className="muted"> then </span>}
          <kbd className={styles.key}>{key}</kbd>
        </Fragment>
      ))}
    </>
  );
}
