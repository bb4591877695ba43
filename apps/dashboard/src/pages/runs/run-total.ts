import type { RunList } from '../../api/types';

export type RunTotal = NonNullable<RunList['total']>;

/** "1 run", "1,234 runs"; past the exact count, the planner's estimate to two figures: "about 12,000 runs". */
export function formatTotal({ count, estimated }: RunTotal): string {
  if (!estimated) return `${count.toLocaleString('en')} run${count === 1 ? '' : 's'}`;
  const unit = 10 ** Math.max(0, Math.floor(Math.log10(count)) - 1);
  return `about ${(Math.round(count / unit) * unit).toLocaleString('en')} runs`;
}

export function totalTitle({ count, estimated }: RunTotal): string {
  return estimated
    ? `More than 10,000 runs match: this is the database's estimate (${count.toLocaleString('en')}), not a count.`
    : 'Every run the filters match, on every page.';
}
