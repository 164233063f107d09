import { existsSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';

// The benchmark table as a bar chart: an SVG (always) rendered to PNG by Debian's Chromium
// through playwright-core (already a dependency for the UI tests).

interface ChartRow {
  name: string;
  ratio: number;
  goal: string;
  met: boolean | null;
}

const CHROMIUM = process.env.FERRY_CHROMIUM ?? '/usr/bin/chromium';

export function chartSvg(rows: ChartRow[]): string {
  const barHeight = 26;
  const labelWidth = 470;
  const plotWidth = 420;
  const top = 50;
  const height = top + rows.length * (barHeight + 10) + 40;
  const maxRatio = Math.max(2, ...rows.filter((row) => !/RSS/.test(row.name)).map((row) => row.ratio));
  const escape = (text: string) => text.replace(/&/g, '&amp;').replace(/</g, '&lt;');
  const bars = rows.map((row, index) => {
    const y = top + index * (barHeight + 10);
    const isMemory = /RSS/.test(row.name);
    const value = isMemory ? row.ratio / 200 : row.ratio / maxRatio;
    const width = Math.max(2, Math.min(1, value) * plotWidth);
    const colour = row.met === null ? '#8a8f98' : row.met ? '#2e8b57' : '#c0392b';
    const valueLabel = isMemory ? `${row.ratio.toFixed(0)} MiB (limit 200)` : `${row.ratio.toFixed(2)}× (${row.goal})`;
    return `<text x="${labelWidth - 8}" y="${y + 18}" text-anchor="end">${escape(row.name)}</text>
<rect x="${labelWidth}" y="${y}" width="${width.toFixed(1)}" height="${barHeight}" fill="${colour}" rx="3"/>
<text x="${labelWidth + width + 6}" y="${y + 18}">${escape(valueLabel)}</text>`;
  });
  return `<svg xmlns="http://www.w3.org/2000/svg" width="${labelWidth + plotWidth + 220}" height="${height}" font-family="sans-serif" font-size="13">
<rect width="100%" height="100%" fill="white"/>
<text x="16" y="28" font-size="17" font-weight="bold">Ferry vs reference tools (ratio of medians; green = goal met)</text>
${bars.join('\n')}
</svg>`;
}

/** Writes `<png>` (and the SVG beside it). Null when no Chromium, false when rendering failed. */
export async function renderChart(rows: ChartRow[], png: string): Promise<boolean | null> {
  const svg = chartSvg(rows);
  await writeFile(png.replace(/\.png$/, '.svg'), svg);
  if (!existsSync(CHROMIUM)) return null;
  try {
    const { chromium } = await import('playwright-core');
    const browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run'] });
    try {
      const page = await browser.newPage();
      await page.setContent(`<body style="margin:0">${svg}</body>`);
      await page.locator('svg').screenshot({ path: png });
    } finally {
      await browser.close();
    }
    return true;
  } catch (error) {
    console.warn(`Chart rendering failed: ${(error as Error).message}`);
    return false;
  }
}
