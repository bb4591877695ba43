import { Bar, BarChart, CartesianGrid, ResponsiveContainer, Tooltip, XAxis, YAxis } from 'recharts';
import type { Activity, ActivityBucket } from '../../api/activity';
import { hrefFor } from '../../app/router';
import { plural } from '../../lib/format';
import { formatTimeOfDay, formatTimestamp } from '../../lib/time';
import styles from './activity.module.css';

/** What a chart counts, its colour (a class on the tokens) and where its points lead. */
type Series = 'started' | 'completed' | 'failed' | 'parked';

const SERIES: Record<Series, { label: string; verb: string; className: string; link: (from: string, to: string) => string }> = {
  // Started: by creation time, whatever they did since.
  started: {
    label: 'started',
    verb: 'started',
    className: styles.started,
    link: (from, to) => hrefFor('/runs', { status: 'all', createdAfter: from, createdBefore: to }),
  },
  // Ended or parked: the runs in that state now whose last change fell in the bucket.
  completed: {
    label: 'completed',
    verb: 'completed',
    className: styles.completed,
    link: (from, to) => hrefFor('/runs', { status: 'completed', updatedAfter: from, updatedBefore: to }),
  },
  failed: {
    label: 'failed',
    verb: 'failed',
    className: styles.failed,
    link: (from, to) => hrefFor('/runs', { status: 'failed', updatedAfter: from, updatedBefore: to }),
  },
  parked: {
    label: 'parked (began waiting)',
    verb: 'began waiting',
    className: styles.parked,
    link: (from, to) => hrefFor('/runs', { status: 'waiting', updatedAfter: from, updatedBefore: to }),
  },
};

const CHARTS: Array<{ id: string; title: string; series: Series[] }> = [
  { id: 'throughput', title: 'Throughput: runs started and completed', series: ['started', 'completed'] },
  { id: 'failures', title: 'Failures', series: ['failed'] },
  { id: 'parked', title: 'Runs parked (began waiting)', series: ['parked'] },
];

/**
 * The overview's charts (recharts): per bucket of the range, runs started and completed, failures, and
 * runs that parked. Each bar is a link to the runs list filtered to its bucket.
 */
export default function ActivityCharts({ activity }: { activity: Activity }) {
  const rows = activity.buckets.map((bucket) => ({ ...bucket, end: new Date(Date.parse(bucket.at) + activity.bucketMs).toISOString() }));
  return (
    <div className={styles.charts}>
      {CHARTS.map((chart) => (
        <figure key={chart.id} className={styles.chart} data-testid={`chart-${chart.id}`}>
          <figcaption className={styles.caption}>
            {chart.title}
            <span className={styles.legend}>
              {chart.series.map((series) => (
                <span key={series} className={styles.legendItem}>
                  <svg className={styles.swatch} viewBox="0 0 10 10" aria-hidden="true">
                    <rect width="10" height="10" className={SERIES[series].className} />
                  </svg>
                  {SERIES[series].label} ({rows.reduce((sum, row) => sum + row[series], 0).toLocaleString()})
                </span>
              ))}
            </span>
          </figcaption>
          <div className={styles.plot}>
            <ResponsiveContainer width="100%" height={150}>
              <BarChart data={rows} margin={{ top: 6, right: 6, bottom: 0, left: -18 }} barGap={1} accessibilityLayer={false}>
                <CartesianGrid vertical={false} />
                <XAxis dataKey="at" tickFormatter={(iso: string) => formatTimeOfDay(iso, 'minute')} minTickGap={24} tickLine={false} />
                <YAxis allowDecimals={false} width={44} tickLine={false} />
                <Tooltip
                  content={<BucketTooltip series={chart.series} />}
                  cursor={{ className: styles.cursor }}
                  isAnimationActive={false}
                />
                {chart.series.map((series) => (
                  <Bar
                    key={series}
                    dataKey={series}
                    isAnimationActive={false}
                    shape={(props: unknown) => <PointLink {...(props as PointProps)} series={series} />}
                  />
                ))}
              </BarChart>
            </ResponsiveContainer>
          </div>
        </figure>
      ))}
    </div>
  );
}

interface PointProps {
  x: number;
  y: number;
  width: number;
  height: number;
  payload: ActivityBucket & { end: string };
}

/** One bar, as a link to the runs behind it; a bucket with none has no bar. */
function PointLink({ x, y, width, height, payload, series }: PointProps & { series: Series }) {
  const count = payload[series];
  if (!count) return null;
  const spec = SERIES[series];
  const label = `${plural(count, 'run')} ${spec.verb} from ${formatTimestamp(payload.at)} to ${formatTimeOfDay(payload.end, 'minute')}: open the list`;
  return (
    <a
      href={spec.link(payload.at, payload.end)}
      aria-label={label}
      data-testid="chart-point"
      data-series={series}
      data-at={payload.at}
      data-count={count}
    >
      <title>{label}</title>
      <rect x={x} y={y} width={Math.max(width, 2)} height={Math.max(height, 2)} className={`${spec.className} ${styles.point}`} />
    </a>
  );
}

interface TooltipProps {
  active?: boolean;
  payload?: Array<{ payload: ActivityBucket & { end: string } }>;
  series: Series[];
}

function BucketTooltip({ active, payload, series }: TooltipProps) {
  const bucket = payload?.[0]?.payload;
  if (!active || !bucket) return null;
  return (
    <div className={styles.tooltip}>
      <div className={styles.tooltipTime}>
        {formatTimestamp(bucket.at)} – {formatTimeOfDay(bucket.end, 'minute')}
      </div>
      {series.map((s) => (
        <div key={s}>
          {SERIES[s].label}: <strong>{bucket[s].toLocaleString()}</strong>
        </div>
      ))}
      <div className="muted">click a bar for its runs</div>
    </div>
  );
}
