import type { Spread } from '../stats';

export interface BarSeries {
  name: string;
  color: string;
}

/**
 * A grouped bar chart as plain SVG: one group per category, one bar per series at its median, a
 * whisker from min to max, the median written above. No chart library: the figure is small and the
 * file must render anywhere markdown does (GitHub included).
 */
export function groupedBars(opts: {
  title: string;
  subtitle: string;
  unit: string;
  categories: string[];
  series: BarSeries[];
  value: (category: string, series: string) => Spread | undefined;
}): string {
  const width = 760;
  const height = 420;
  const m = { top: 78, right: 24, bottom: 48, left: 64 };
  const plotW = width - m.left - m.right;
  const plotH = height - m.top - m.bottom;
  const values = opts.categories.flatMap((c) => opts.series.map((s) => opts.value(c, s.name)?.max ?? 0));
  const top = niceCeiling(Math.max(1, ...values));
  const y = (v: number) => px(m.top + plotH - (v / top) * plotH);
  const groupW = plotW / opts.categories.length;
  const barW = px(Math.min(56, (groupW * 0.75) / opts.series.length));
  const parts: string[] = [];

  parts.push(`<rect width="${width}" height="${height}" fill="#ffffff"/>`);
  parts.push(`<text x="${m.left}" y="26" font-size="16" font-weight="600">${escape(opts.title)}</text>`);
  parts.push(`<text x="${m.left}" y="46" font-size="12" fill="#555">${escape(opts.subtitle)}</text>`);
  for (let i = 0; i <= 5; i++) {
    const v = (top / 5) * i;
    parts.push(`<line x1="${m.left}" x2="${width - m.right}" y1="${y(v)}" y2="${y(v)}" stroke="#e5e7eb"/>`);
    parts.push(`<text x="${m.left - 8}" y="${y(v) + 4}" font-size="11" text-anchor="end" fill="#555">${format(v)}</text>`);
  }
  parts.push(
    `<text transform="translate(16 ${m.top + plotH / 2}) rotate(-90)" font-size="11" text-anchor="middle" fill="#555">${escape(opts.unit)}</text>`,
  );

  opts.categories.forEach((category, ci) => {
    const groupX = px(m.left + ci * groupW + (groupW - barW * opts.series.length) / 2);
    opts.series.forEach((series, si) => {
      const value = opts.value(category, series.name);
      const x = px(groupX + si * barW);
      if (!value) {
        parts.push(`<text x="${x + barW / 2}" y="${y(0) - 6}" font-size="10" text-anchor="middle" fill="#999">n/a</text>`);
        return;
      }
      const cx = px(x + barW / 2);
      parts.push(
        `<rect x="${px(x + 3)}" y="${y(value.median)}" width="${px(barW - 6)}" height="${px(y(0) - y(value.median))}" fill="${series.color}"><title>${escape(`${series.name} ${category}: ${format(value.median)} (${format(value.min)}–${format(value.max)})`)}</title></rect>`,
      );
      parts.push(
        `<path d="M${cx} ${y(value.min)}V${y(value.max)}M${cx - 5} ${y(value.min)}H${cx + 5}M${cx - 5} ${y(value.max)}H${cx + 5}" stroke="#111" stroke-width="1"/>`,
      );
      parts.push(`<text x="${cx}" y="${y(value.max) - 5}" font-size="11" text-anchor="middle">${format(value.median)}</text>`);
    });
    parts.push(
      `<text x="${px(m.left + ci * groupW + groupW / 2)}" y="${height - m.bottom + 20}" font-size="13" text-anchor="middle">${escape(category)}</text>`,
    );
  });
  parts.push(`<line x1="${m.left}" x2="${width - m.right}" y1="${y(0)}" y2="${y(0)}" stroke="#111"/>`);

  // Legend, right-aligned; each entry as wide as its name (about 6.5 px a character) plus its swatch.
  const entryW = (name: string) => 40 + name.length * 6.5;
  let lx = width - m.right - opts.series.reduce((sum, s) => sum + entryW(s.name), 0);
  for (const series of opts.series) {
    parts.push(
      `<rect x="${lx}" y="58" width="12" height="12" fill="${series.color}"/><text x="${lx + 18}" y="68" font-size="12">${escape(series.name)}</text>`,
    );
    lx += entryW(series.name);
  }
  return `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 ${width} ${height}" width="${width}" height="${height}" font-family="system-ui, -apple-system, Segoe UI, sans-serif">\n${parts.join('\n')}\n</svg>\n`;
}

/** 1, 2 or 5 times a power of ten, at or above `value`. */
function niceCeiling(value: number): number {
  const power = 10 ** Math.floor(Math.log10(value));
  for (const step of [1, 2, 2.5, 5, 10]) if (step * power >= value) return step * power;
  return 10 * power;
}

function format(value: number): string {
  return value >= 10 ? Math.round(value).toLocaleString('en-US') : String(Math.round(value * 10) / 10);
}

/** Coordinates to a tenth of a pixel: the file stays readable and diffs stay small. */
function px(value: number): number {
  return Math.round(value * 10) / 10;
}

function escape(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}
