// The CLI's tables: the terminal's width, times, and columns padded and cut to fit (the
// payouts and billing listings).
import type { CliIo } from './args.js';

/** The terminal's width (a pipe or a test: 120). */
export function columns(io: CliIo): number {
  const width = (io.stdout as { columns?: unknown }).columns;
  return typeof width === 'number' && width >= 40 ? width : 120;
}

/** An ISO 8601 time to the second (`2026-01-02T03:04:05Z`), or `-`. */
export function iso(ms: number | undefined): string {
  return ms !== undefined && Number.isFinite(ms) ? new Date(ms).toISOString().replace(/\.\d{3}Z$/, 'Z') : '-';
}

/** `text` cut to `width` characters (at least 40, past the terminal's edge if need be), with `…` when cut. */
function cut(text: string, width: number): string {
  const room = Math.max(40, width);
  return text.length <= room ? text : `${text.slice(0, room - 1)}…`;
}

/** Rows with every column but the last padded to its widest cell; the last one cut to what is left of `width`. */
export function table(rows: string[][], width: number): string[] {
  const last = rows[0]!.length - 1;
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((row) => row[i]!.length)));
  const used = 2 + widths.slice(0, last).reduce((sum, w) => sum + w + 2, 0);
  return rows.map((row) =>
    `  ${row.map((cell, i) => (i < last ? cell.padEnd(widths[i]!) : cut(cell, width - used))).join('  ')}`.trimEnd(),
  );
}
