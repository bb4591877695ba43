import { runHref } from '../app/router';
import { elideMiddle } from '../lib/format';
import { CopyButton } from './copy-button';
import styles from './run-link.module.css';

interface RunLinkProps {
  runId: string;
  /** The whole id, wrapped (the overview's oldest run); else its middle is dropped when long. */
  full?: boolean;
  /** A button beside the link that copies the id. */
  copy?: boolean;
}

/**
 * A run id as a link, monospace. A long id shows its beginning and its end, which tells sibling runs
 * apart (`7f3a2c91…c3d4e5f6/review`); the middle stays in the text, hidden from sight only, so the
 * link's accessible name, a copied selection and the tooltip are the whole id. With `copy`, a button
 * beside it copies the id.
 */
export function RunLink({ runId, full = false, copy = false }: RunLinkProps) {
  const [head, middle, tail] = full ? [runId, '', ''] : elideMiddle(runId);
  const link = (
    <a href={runHref(runId)} className={full ? styles.full : styles.link} title={runId}>
      {head}
      {middle && (
        <>
          <span className={styles.elided} data-elided="">
            {middle}
          </span>
          <span className={styles.tail}>{tail}</span>
        </>
      )}
    </a>
  );
  if (!copy) return link;
  return (
    <span className={styles.withCopy}>
      {link}
      <CopyButton text={runId} label="Copy run id" />
    </span>
  );
}
