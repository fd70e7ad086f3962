// The chart of `npm run simulate`: small multiples of line charts over the shard count, one
// self-contained SVG (no scripts, no fonts or assets from the network).

/** A line of a panel: its points (x = a shard count, y = the measure), colour and dash. */
export type Series = { label: string; color: string; dashed: boolean; points: [number, number][] };

/** One panel: a title, a log-scale y axis from `yMin` to `yMax`, and its lines. */
export type Panel = { title: string; yMin: number; yMax: number; format: (y: number) => string; series: Series[] };

/** A legend entry: a swatch of `color` (dashed or not) and its label. */
export type LegendEntry = { label: string; color: string; dashed: boolean };

const W = 440;
const H = 260;
const M = { left: 62, right: 16, top: 30, bottom: 40 };

/** escapeXml escapes text for an SVG text node or attribute. */
export function escapeXml(s: string): string {
  return s.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/"/g, "&quot;");
}

function panelSvg(p: Panel, xs: readonly number[], ox: number, oy: number): string {
  const iw = W - M.left - M.right;
  const ih = H - M.top - M.bottom;
  const x = (v: number) => {
    const i = xs.indexOf(v);
    return ox + M.left + (xs.length === 1 ? iw / 2 : (i / (xs.length - 1)) * iw);
  };
  const ly = (v: number) => Math.log10(Math.min(p.yMax, Math.max(p.yMin, v)));
  const y = (v: number) => oy + M.top + ih - ((ly(v) - ly(p.yMin)) / (ly(p.yMax) - ly(p.yMin))) * ih;
  const out: string[] = [];
  out.push(`<text x="${ox + W / 2}" y="${oy + 18}" text-anchor="middle" font-weight="bold">${escapeXml(p.title)}</text>`);
  for (let d = Math.ceil(ly(p.yMin)); d <= Math.floor(ly(p.yMax)); d++) {
    const v = 10 ** d;
    out.push(`<line x1="${ox + M.left}" x2="${ox + W - M.right}" y1="${y(v)}" y2="${y(v)}" stroke="#ddd"/>`);
    const label = d === Math.ceil(ly(p.yMin)) ? `≤${p.format(v)}` : p.format(v);
    out.push(`<text x="${ox + M.left - 4}" y="${y(v) + 4}" text-anchor="end" font-size="10">${escapeXml(label)}</text>`);
  }
  for (const v of xs) {
    out.push(`<line x1="${x(v)}" x2="${x(v)}" y1="${oy + M.top}" y2="${oy + H - M.bottom}" stroke="#eee"/>`);
    out.push(`<text x="${x(v)}" y="${oy + H - M.bottom + 14}" text-anchor="middle" font-size="10">${v}</text>`);
  }
  out.push(`<text x="${ox + M.left + iw / 2}" y="${oy + H - 8}" text-anchor="middle" font-size="10">shards</text>`);
  out.push(
    `<rect x="${ox + M.left}" y="${oy + M.top}" width="${iw}" height="${ih}" fill="none" stroke="#999"/>`,
  );
  for (const s of p.series) {
    if (s.points.length === 0) continue;
    const dash = s.dashed ? ` stroke-dasharray="5 3"` : "";
    const path = s.points.map(([px, py]) => `${x(px).toFixed(1)},${y(py).toFixed(1)}`).join(" ");
    out.push(`<polyline points="${path}" fill="none" stroke="${s.color}" stroke-width="1.6"${dash}><title>${escapeXml(s.label)}</title></polyline>`);
    for (const [px, py] of s.points) {
      const title = `<title>${escapeXml(`${s.label}, ${px} shards: ${p.format(py)}`)}</title>`;
      out.push(
        s.dashed
          ? `<rect x="${(x(px) - 3).toFixed(1)}" y="${(y(py) - 3).toFixed(1)}" width="6" height="6" fill="white" stroke="${s.color}">${title}</rect>`
          : `<circle cx="${x(px).toFixed(1)}" cy="${y(py).toFixed(1)}" r="2.8" fill="${s.color}">${title}</circle>`,
      );
    }
  }
  return out.join("\n");
}

/**
 * chartSvg renders `panels` two to a row over the shard counts `xs`, under `title`, with
 * `legend` and `notes` (lines of text) beneath.
 */
export function chartSvg(title: string, xs: readonly number[], panels: readonly Panel[], legend: readonly LegendEntry[], notes: readonly string[]): string {
  const cols = 2;
  const rows = Math.ceil(panels.length / cols);
  const top = 34;
  const legendH = 24 * Math.ceil(legend.length / 4) + 16 * notes.length + 16;
  const width = cols * W;
  const height = top + rows * H + legendH;
  const parts: string[] = [];
  parts.push(
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" font-family="sans-serif" font-size="12">`,
  );
  parts.push(`<rect width="${width}" height="${height}" fill="white"/>`);
  parts.push(`<text x="${width / 2}" y="22" text-anchor="middle" font-size="15" font-weight="bold">${escapeXml(title)}</text>`);
  panels.forEach((p, i) => parts.push(panelSvg(p, xs, (i % cols) * W, top + Math.floor(i / cols) * H)));
  const ly = top + rows * H + 8;
  legend.forEach((e, i) => {
    const lx = 20 + (i % 4) * (width / 4);
    const y = ly + Math.floor(i / 4) * 24 + 10;
    const dash = e.dashed ? ` stroke-dasharray="5 3"` : "";
    parts.push(`<line x1="${lx}" x2="${lx + 28}" y1="${y}" y2="${y}" stroke="${e.color}" stroke-width="2"${dash}/>`);
    parts.push(`<text x="${lx + 34}" y="${y + 4}">${escapeXml(e.label)}</text>`);
  });
  const ny = ly + 24 * Math.ceil(legend.length / 4) + 8;
  notes.forEach((n, i) => parts.push(`<text x="20" y="${ny + i * 16}" font-size="11" fill="#444">${escapeXml(n)}</text>`));
  parts.push(`</svg>`);
  return parts.join("\n") + "\n";
}
