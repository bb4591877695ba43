import styles from './tabs.module.css';

export interface TabSpec<Id extends string> {
  id: Id;
  label: string;
  count?: number;
}

interface TabsProps<Id extends string> {
  tabs: readonly TabSpec<Id>[];
  active: Id;
  onSelect: (id: Id) => void;
}

/** A tab strip; each tab is `tab-<id>`. The caller renders the active panel. */
export function Tabs<Id extends string>({ tabs, active, onSelect }: TabsProps<Id>) {
  return (
    <div className={styles.strip} role="tablist">
      {tabs.map((tab) => (
        <button
          key={tab.id}
          type="button"
          role="tab"
          aria-selected={tab.id === active}
          className={tab.id === active ? `${styles.tab} ${styles.active}` : styles.tab}
          onClick={() => onSelect(tab.id)}
          data-testid={`tab-${tab.id}`}
        >
          {tab.label}
          {tab.count !== undefined && <span className={styles.count}>{tab.count}</span>}
        </button>
      ))}
    </div>
  );
}
