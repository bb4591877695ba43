import { describeStep } from '../lib/step-names';
import styles from './step-name.module.css';

/**
 * A journal key as what it means ("deadline of signal approval"), with the key itself beside it in a
 * quieter style and on hover, so it can still be searched for and copied. A step's own name shows once.
 */
export function StepName({ stepKey, kind }: { stepKey: string; kind?: string }) {
  const { meaning, key } = describeStep(stepKey, kind);
  if (meaning === key) {
    return (
      <span className={styles.meaning} data-testid="step-name" data-key={key}>
        {key}
      </span>
    );
  }
  return (
    <span className={styles.name} title={key} data-testid="step-name" data-key={key}>
      <span className={styles.meaning}>{meaning}</span> <span className={styles.key}>{key}</span>
    </span>
  );
}
